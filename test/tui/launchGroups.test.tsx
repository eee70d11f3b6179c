// The launch form's field groups, as a person sees them: the schema's groups in order with
// `advanced` folded, enter folds and unfolds a group, tab jumps between groups, `/` narrows the
// fields by name (and opens a folded group that matches), and a launch still passes every changed
// value, shown or not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProcessManager, type SpawnOptions } from "../../src/tui/services/processManager.ts";
import { tempRoot } from "./fixtures.ts";
import { renderApp } from "./harness.tsx";

const ESC = "\x1b";
const CTRL_S = "\x13";
const TAB = "\t";

/** The group headers of a frame, in order: [title, folded]. */
function headers(frame: string): [string, boolean][] {
  return [...frame.matchAll(/^[› ] ([▸▾]) ([a-z ]+?) {2}\d/gm)].map((m) => [m[2]!, m[1] === "▸"]);
}

test("sl_basic's form shows the schema's groups in order, advanced folded; enter unfolds and folds it", async () => {
  const root = tempRoot();
  const h = renderApp(root, { first: { name: "launch", recipe: "sl_basic" }, columns: 120, rows: 80 });
  try {
    const f = await h.waitFor((f) => f.includes("Launch sl_basic") && f.includes("advanced"), "the form");
    assert.deepEqual(headers(f), [
      ["run and model", false],
      ["optimizer and schedule", false],
      ["data", false],
      ["evaluation", false],
      ["checkpoints", false],
      ["tracking", false],
      ["advanced", true],
    ]);
    // Fields sit under their group; the folded group's fields are not on screen.
    const at = (s: string): number => f.indexOf(s);
    assert.ok(at("▾ optimizer and schedule") < at("learning_rate") && at("learning_rate") < at("▾ data"), f);
    assert.ok(at("▾ data") < at("train_on_what") && at("train_on_what") < at("▾ evaluation"), f);
    assert.ok(at("▾ tracking") < at("wandb_project") && at("wandb_project") < at("▸ advanced"), f);
    assert.ok(!f.includes("submit_ahead") && !f.includes("async_periodic_saves"), "advanced is folded");
    assert.match(f, /▸ advanced {2}3 fields {2}\(enter unfolds\)/);

    // The last group header is just above the launch button.
    await h.press("G");
    await h.press("k");
    await h.waitFor((f) => /› ▸ advanced/.test(f), "the cursor on the advanced header");
    await h.press("\r");
    const open = await h.waitFor((f) => f.includes("▾ advanced"), "advanced unfolded");
    assert.ok(open.includes("submit_ahead") && open.includes("async_periodic_saves"), open);
    await h.press("\r");
    const closed = await h.waitFor((f) => f.includes("▸ advanced"), "advanced folded again");
    assert.ok(!closed.includes("submit_ahead"), closed);

    // tab walks the headers, wrapping around from the last one.
    await h.press("g");
    await h.waitFor((f) => /› ▾ run and model/.test(f), "the cursor on the first header");
    await h.press(TAB);
    await h.waitFor((f) => /› ▾ optimizer and schedule/.test(f), "tab to the next group");
    await h.press(TAB);
    await h.waitFor((f) => /› ▾ data/.test(f), "and the next");
    await h.press("G");
    await h.press(TAB);
    await h.waitFor((f) => /› ▾ run and model/.test(f), "tab wraps to the first group");
  } finally {
    h.unmount();
  }
});

test("/ narrows the fields by name, opens a folded group that matches, esc clears the filter", async () => {
  const root = tempRoot();
  const h = renderApp(root, { first: { name: "launch", recipe: "sl_basic" }, columns: 120, rows: 80 });
  try {
    await h.waitFor((f) => f.includes("▸ advanced"), "the form");
    await h.press("/");
    await h.press("adam");
    const f = await h.waitFor((f) => f.includes("/ adam▏"), "the filter as typed");
    // The run group's header stays with the log path under it; no run field matches.
    assert.deepEqual(headers(f), [
      ["run and model", false],
      ["optimizer and schedule", false],
    ]);
    assert.match(f, /▾ run and model {2}0 of 6 fields/);
    assert.ok(f.includes("adam_beta1") && f.includes("adam_beta2") && f.includes("adam_eps"), f);
    assert.ok(!f.includes("learning_rate") && !f.includes("model_name"), f);
    assert.match(f, /3 of 51 fields/);
    assert.match(f, /▾ optimizer and schedule {2}3 of 7 fields/);
    // Words must all match; a field of the folded group shows with its group open.
    await h.press("\x15"); // ctrl+u empties the filter text
    await h.press("sub ahead");
    const adv = await h.waitFor((f) => f.includes("/ sub ahead▏") && f.includes("submit_ahead"), "a field of the folded group");
    assert.deepEqual(headers(adv), [
      ["run and model", false],
      ["advanced", false],
    ]);
    await h.press("\r");
    await h.waitFor((f) => f.includes("/ sub ahead  (") && /› {3}submit_ahead/.test(f), "the filter kept, the cursor on the match");
    await h.press(ESC);
    const all = await h.waitFor((f) => !f.includes("/ sub ahead"), "the filter cleared");
    assert.equal(headers(all).length, 7);
    assert.ok(all.includes("▸ advanced") && !all.includes("submit_ahead"), "advanced folds again without the filter");
    assert.ok(all.includes("Launch sl_basic"), "esc cleared the filter instead of leaving");
  } finally {
    h.unmount();
  }
});

test("a launch passes every changed value, including ones in a folded group or filtered away", async () => {
  const root = tempRoot();
  const spawned: (readonly string[])[] = [];
  const spawner = async (args: readonly string[], _options: SpawnOptions): Promise<number> => {
    spawned.push(args);
    return process.pid;
  };
  const processes = new ProcessManager({ termAfterMs: 200, killAfterMs: 200 }, spawner);
  const h = renderApp(root, { first: { name: "launch", recipe: "sl_basic", logPath: join(root, "run") }, columns: 120, rows: 40, processes });
  try {
    await h.waitFor((f) => f.includes("Launch sl_basic") && f.includes("▾ run and model"), "the form");
    // Edit submit_ahead (advanced) through the filter.
    await h.press("/");
    await h.press("submit");
    await h.waitFor((f) => /› {3}submit_ahead/.test(f), "the cursor on the match");
    await h.press("\r"); // keep the filter
    await h.press("\r"); // edit the field
    await h.press("\x15");
    await h.press("3\r");
    await h.waitFor((f) => f.includes("submit_ahead=3"), "the changed value in the command line");
    // Then learning_rate, with the filter changed to it (submit_ahead is no longer shown).
    await h.press("/");
    await h.press("\x15");
    await h.press("learning\r");
    await h.press("\r");
    await h.press("\x15");
    await h.press("0.02\r");
    const f = await h.waitFor((f) => f.includes("learning_rate=0.02"), "the second change");
    assert.ok(!/submit_ahead {2,}/.test(f), "submit_ahead is filtered away");
    assert.match(f, /✓ ready: cookbook run sl_basic learning_rate=0\.02 submit_ahead=3/);
    await h.press(CTRL_S);
    await h.waitFor(() => spawned.length === 1, "the launch");
    const args = spawned[0]!;
    assert.deepEqual(args.slice(1, 3), ["run", "sl_basic"]);
    assert.ok(args.includes("submit_ahead=3") && args.includes("learning_rate=0.02"), args.join(" "));
    assert.equal(args.filter((a) => /^[a-z_.]+=/.test(a) && !a.startsWith("log_path=") && !a.startsWith("behavior_if")).length, 2, args.join(" "));
  } finally {
    h.unmount();
  }
});
