// `cookbook run sl_basic base_url=…` against `cookbook serve` through a proxy that keeps answering
// 429 and 503 in the server's place and resetting every third forward_backward upload mid-body.
// The recipe must finish by itself and log exactly the metrics of a run without faults (same seed,
// same server): every fault was retried, nothing was trained twice or skipped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startProxy, type Fault } from "../../test/tinker/http/proxy.ts";
import { serveEnv, startServe } from "../serve/server.ts";
import { SMALL_SL, runCookbook, tempDir } from "./helpers.ts";

type Row = Record<string, unknown>;
const readRows = (logDir: string): Row[] =>
  readFileSync(join(logDir, "metrics.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row);
/** A row without its timings, which differ from run to run. */
const untimed = (r: Row): Row => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith("time/")));

test("sl_basic through 429s, 503s and uploads reset mid-body logs the metrics of a clean run", async () => {
  const root = tempDir("cookbook-remote-faults-");
  const env = serveEnv({ COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" });
  const server = await startServe(join(root, "store"), env);
  let n = 0;
  let uploads = 0;
  const plan = (req: { path: string }): Fault | undefined => {
    n++;
    // Counted on their own, so the faults land whatever else the client asks in between.
    if (req.path === "/api/v1/forward_backward" && ++uploads % 3 === 1) return { kind: "reset_upload" };
    if (n % 7 === 0) return { kind: "answer", status: 503, json: { detail: "overloaded" } };
    if (n % 11 === 0) return { kind: "answer", status: 429, headers: { "retry-after-ms": "100" }, json: { detail: "slow down" } };
    return undefined;
  };
  const proxy = await startProxy(server.url, plan);
  try {
    const args = (logDir: string, url: string): string[] => ["run", "sl_basic", `base_url=${url}`, `log_path=${logDir}`, ...SMALL_SL, "max_steps=12", "seed=4"];
    const clean = await runCookbook(args(join(root, "clean"), server.url), env);
    assert.equal(clean.code, 0, clean.stderr);
    const faulty = await runCookbook(args(join(root, "faulty"), proxy.url), env);
    assert.equal(faulty.code, 0, `${faulty.stderr}\nserver: ${server.stderr()}`);

    const kinds = new Set(proxy.exchanges.map((e) => (e.fault === "answer" ? `answer ${e.status}` : e.fault)).filter((k) => k !== undefined));
    assert.deepEqual([...kinds].sort(), ["answer 429", "answer 503", "reset_upload"], "every kind of fault was injected");
    const got = readRows(join(root, "faulty")).map(untimed);
    const expected = readRows(join(root, "clean")).map(untimed);
    assert.equal(got.length, 12);
    assert.deepEqual(got, expected);
  } finally {
    await proxy.close();
    await server.stop();
  }
});
