import { test } from "node:test";
import { makeRlRun, makeSlRun, tempRoot } from "./fixtures.ts";
import { renderApp } from "./harness.tsx";
test("dbg", async () => {
  const root = tempRoot();
  makeSlRun(root);
  makeRlRun(root);
  const h = renderApp(root);
  await h.waitFor((f) => f.includes("Runs (2)"), "runs table");
  await h.press("/");
  console.log(h.frame().split("\n").slice(10, 12).join("\n"));
  await new Promise((r) => setTimeout(r, 500));
  console.log(h.frame().split("\n").slice(10, 12).join("\n"));
  await h.press("x");
  console.log(h.frame().split("\n").slice(10, 12).join("\n"));
  h.unmount();
});
