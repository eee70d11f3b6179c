// Adding a screen touches the route table, the registry and the new screen's file only: a route, a
// screen written here (as a new file would be) and one registry entry give it a pane key among the run panes,
// its bindings in dispatch, help and footer — with no other file changed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ReactNode, useReducer } from "react";
import { Text } from "ink";
import type { Binding } from "../../src/tui/keys/keymap.ts";
import { useScreenKeys } from "../../src/tui/ui/hooks/useScreenKeys.ts";
import type { RouteOf } from "../../src/tui/state/routes.ts";
import { SCREENS, makeRegistry } from "../../src/tui/ui/screens/registry.ts";
import { makeRlRun, tempRoot } from "./fixtures.ts";
import { renderApp } from "./harness.tsx";

// ---- the new screen's route (a line in the route table, here by module augmentation) ----
declare module "../../src/tui/state/routes.ts" {
  interface RouteParams {
    notes: { runDir: string };
  }
}
// ---- the new screen's file ----
type NotesRoute = RouteOf<"notes">;
const NOTES_KEYS: readonly Binding[] = [{ id: "addNote", keys: ["n"], description: "Add a note to the run", hint: "note" }];
const notesReducer = (count: number, action: "add"): number => (action === "add" ? count + 1 : count);
function Notes({ route }: { route: NotesRoute; rows: number; width: number }): ReactNode {
  const [count, dispatch] = useReducer(notesReducer, 0);
  useScreenKeys({
    capturing: false,
    onCommand: (cmd) => {
      if (cmd !== "addNote") return false;
      dispatch("add");
      return true;
    },
  });
  return <Text>{`Notes of ${route.runDir.split("/").at(-1)}: ${count}`}</Text>;
}
// ---- the registry entry ----
const registry = makeRegistry([
  ...SCREENS,
  { name: "notes", component: Notes, keyScope: "notes", shared: ["list", "run"], paneKey: "5", title: "notes", bindings: NOTES_KEYS },
]);

test("a screen added through the registry alone is a run pane with its keys in help and footer", async () => {
  const root = tempRoot();
  const dir = makeRlRun(root);
  const h = renderApp(root, { first: { name: "dashboard", runDir: dir }, rows: 30, columns: 220, registry });
  try {
    await h.waitFor((f) => f.includes("1-5 panes"), "pane range in the footer grows to the new pane");
    await h.press("5");
    await h.waitFor((f) => f.includes("Notes of rl-run: 0") && f.includes("n note"), "new pane with its footer hint");
    await h.press("nn");
    await h.waitFor((f) => f.includes("Notes of rl-run: 2"), "its own key handled by its reducer");
    await h.press("?");
    const help = await h.waitFor((f) => f.includes("Keys — notes"), "help");
    assert.ok(help.includes("Add a note to the run") && help.includes("Run: notes"));
    await h.press("?");
    await h.press("2");
    await h.waitFor((f) => f.includes("Transcripts  iteration"), "other panes still switch from it");
  } finally {
    h.unmount();
  }
  assert.throws(() => makeRegistry([...SCREENS, SCREENS[0]]), /two screens named home/);
});
