// The Batch screen, rendered whole (ink-testing-library) on fixture batch directories: empty,
// running with mixed statuses, a failed run with its error, the comparison table; enter opens a
// run's dashboard and esc comes back; o overlays every run of the batch; n launches an experiment
// file through the process manager (a fake spawner here) and follows the batch.json it writes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeBatchState } from "../../src/experiments/state.ts";
import { ProcessManager, type SpawnOptions } from "../../src/tui/services/processManager.ts";
import { makeBatch, makeComparison } from "./batchFixtures.ts";
import { tempRoot } from "./fixtures.ts";
import { renderApp } from "./harness.tsx";

const ESC = "\x1b";

function fits(frame: string, rows: number, columns: number): void {
  const lines = frame.split("\n");
  assert.ok(lines.length < rows, `frame has ${lines.length} lines for ${rows} rows`);
  for (const l of lines) assert.ok(l.length <= columns, `line wider than ${columns}: ${l}`);
}

test("home B opens an empty Batch screen that says how to launch one", async () => {
  const root = tempRoot();
  const h = renderApp(root);
  try {
    await h.waitFor((f) => f.includes("B batches"), "home footer hint");
    await h.press("B");
    const f = await h.waitFor((f) => f.includes("Batches  0 under"), "batch screen");
    assert.ok(f.includes("no batches yet: n launches an experiment file"));
    assert.ok(f.includes(join(root, "experiments")));
    assert.ok(f.includes("n launch") && f.includes("o overlay all"), "footer from the keymap");
    await h.press("?");
    const help = await h.waitFor((f) => f.includes("Keys — batch"), "help");
    assert.ok(help.includes("Dashboard of the selected run with every other run of the batch overlaid"));
    await h.press("?");
    await h.press(ESC);
    await h.waitFor((f) => f.includes("Recipes ("), "esc goes home");
  } finally {
    h.unmount();
  }
});

test("a running batch: runs queued/running/done/failed/stopped with key metric, trend and the failed run's error", async () => {
  const root = tempRoot();
  const experiments = join(root, "experiments");
  makeBatch(
    experiments,
    "sweep",
    [
      { name: "lr-small", status: "done", steps: 30 },
      { name: "lr-mid", status: "running", steps: 12 },
      { name: "lr-big", status: "failed", steps: 3, error: "engine: NaN loss at step 2 (learning_rate too high?)" },
      { name: "lr-huge", status: "stopped", steps: 2 },
      { name: "lr-giant", status: "queued" },
    ],
    { pid: process.pid },
  );
  const older = makeBatch(experiments, "older", [{ name: "r", status: "done", steps: 5 }], { phase: "done" });
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(older, "batch.json"), hourAgo, hourAgo);
  const h = renderApp(root, { first: { name: "batch" }, columns: 120, rows: 30 });
  try {
    const list = await h.waitFor((f) => f.includes("Batches  2 under"), "batches list");
    assert.match(list, /● training\s+sweep\s+1 done · 1 running · 1 queued · 1 failed · 1 stopped/);
    assert.match(list, /done\s+older\s+1 done\s+–\s+1h00m ago/, "most recent first");
    await h.press("\r");
    const f = await h.waitFor((f) => f.includes("Batch sweep"), "batch opened");
    assert.match(f, /Batch sweep\s+● training\s+pid \d+/);
    assert.match(f, /done\s+lr-small\s+sl_basic\s+29\s+train_mean_nll\s+0\.6\d+\s+█[▇▆▅▄▃▂▁]+/);
    assert.match(f, /running\s+lr-mid\s+sl_basic\s+11\s+train_mean_nll\s+1\.\d+\s+█/);
    assert.match(f, /failed\s+lr-big\s+sl_basic\s+2\s+train_mean_nll\s+[\d.]+\s+error: engine: NaN loss/);
    assert.match(f, /stopped\s+lr-huge/);
    assert.match(f, /queued\s+lr-giant\s+sl_basic\s+–\s+train_mean_nll\s+–/);
    assert.ok(f.includes("no comparison yet"));
    fits(f, 30, 120);
    await h.press("jj");
    const failed = await h.waitFor((f) => f.includes("lr-big: sl_basic"), "failed run selected");
    assert.ok(failed.includes("error: engine: NaN loss at step 2 (learning_rate too high?)"), "the error in full under the table");
    await h.press("jj");
    await h.press("\r");
    await h.waitFor((f) => f.includes("lr-giant is queued: it has no run directory yet"), "a queued run has no dashboard");
  } finally {
    h.unmount();
  }
});

test("a finished batch shows the comparison table with each test set's best marked", async () => {
  const root = tempRoot();
  const dir = makeBatch(
    join(root, "experiments"),
    "grid",
    [
      { name: "run-a", status: "done", steps: 20 },
      { name: "run-b", status: "done", steps: 20 },
    ],
    { phase: "done" },
  );
  makeComparison(dir, "grid");
  const h = renderApp(root, { first: { name: "batch", place: { open: dir } }, columns: 100, rows: 30 });
  try {
    const f = await h.waitFor((f) => f.includes("Comparison  3 models × 2 test sets"), "comparison");
    assert.match(f, /model\s+kind\s+arith \(accuracy ↑\)\s+chat \(nll ↓\)/);
    assert.match(f, /base:tiny-chat\s+baseline\s+10\.0%\s+3\.2\s*$/m);
    assert.match(f, /run-a\s+run\s+62\.0% \*\s+1\.9\s*$/m);
    assert.match(f, /run-b\s+run\s+40\.0%\s+1\.45 \*\s*$/m);
    fits(f, 30, 100);
  } finally {
    h.unmount();
  }
});

test("enter opens a run's dashboard and esc returns to the batch; o overlays every started run", async () => {
  const root = tempRoot();
  const dir = makeBatch(join(root, "experiments"), "pair", [
    { name: "run-a", status: "done", steps: 20 },
    { name: "run-b", status: "running", steps: 10 },
    { name: "run-c", status: "queued" },
  ]);
  const h = renderApp(root, { first: { name: "batch" }, columns: 120, rows: 40 });
  try {
    await h.waitFor((f) => f.includes("pair"), "listed");
    await h.press("\r");
    await h.waitFor((f) => f.includes("Batch pair"), "opened");
    await h.press("j");
    await h.waitFor((f) => f.includes("run-b: sl_basic"), "run-b selected");
    await h.press("\r");
    await h.waitFor((f) => f.includes("train_mean_nll  last") && f.startsWith("run-b"), "run-b's dashboard");
    await h.press(ESC);
    const back = await h.waitFor((f) => f.includes("Batch pair"), "back on the batch");
    assert.ok(back.includes("run-b: sl_basic"), "same run selected");
    await h.press("o");
    const overlay = await h.waitFor((f) => f.includes("overlay: run-a"), "dashboard with the batch overlaid");
    assert.ok(overlay.startsWith("run-b"), "the selected run is the main one");
    assert.ok(!overlay.includes("run-c"), "a queued run has nothing to overlay");
    await h.press(ESC);
    await h.waitFor((f) => f.includes("Batch pair"), "back again");
    await h.press("k");
    await h.press("o");
    const other = await h.waitFor((f) => f.startsWith("run-a") && f.includes("overlay: run-b"), "overlay set follows the selection");
    assert.match(other.split("\n")[0]!, /overlay: run-b\s*$/, "exactly the batch's other started run");
  } finally {
    h.unmount();
  }
  assert.ok(dir.endsWith("pair"));
});

test("n launches cookbook batch <file> through the spawner and follows the batch.json it writes", async () => {
  const root = tempRoot();
  const experiments = join(root, "experiments");
  mkdirSync(experiments, { recursive: true });
  writeFileSync(join(experiments, "models-x-data.ts"), "export default {};\n");
  writeFileSync(join(experiments, "sweep.yaml"), "name: sweep\n");
  const spawned: { args: readonly string[]; options: SpawnOptions }[] = [];
  // The real `cookbook batch` writes experiments/<experiment>/batch.json naming its file; this one
  // does it a moment after starting.
  const spawner = async (args: readonly string[], options: SpawnOptions): Promise<number> => {
    spawned.push({ args, options });
    const file = args[2]!;
    setTimeout(() => {
      const dir = join(experiments, "launched");
      mkdirSync(dir, { recursive: true });
      writeBatchState(dir, {
        experiment: "launched",
        file,
        pid: process.pid,
        updated_at: new Date().toISOString(),
        phase: "training",
        runs: [{ name: "first", recipe: "sl_basic", overrides: {}, log_path: join(dir, "first"), status: "queued" }],
      });
    }, 300);
    return process.pid;
  };
  const processes = new ProcessManager({ termAfterMs: 200, killAfterMs: 200 }, spawner);
  const h = renderApp(root, { first: { name: "batch" }, columns: 100, rows: 30, processes });
  try {
    await h.waitFor((f) => f.includes("Batches  0"), "empty");
    await h.press("n");
    const dialog = await h.waitFor(
      (f) => f.includes("Launch cookbook batch <file>:") && !f.includes("listing the experiment files"),
      "launch dialog, files listed",
    );
    assert.match(dialog, /› experiments\/models-x-data\.ts|› .*models-x-data\.ts/);
    assert.ok(dialog.includes("sweep.yaml"));
    await h.press("swe");
    await h.waitFor((f) => !f.includes("models-x-data.ts") && f.includes("sweep.yaml"), "filtered");
    await h.press("\r");
    await h.waitFor((f) => f.includes("Batch launched") && f.includes("queued") && f.includes("first"), "the launched batch opens by itself");
    assert.equal(spawned.length, 1);
    assert.deepEqual(spawned[0]!.args.slice(1), ["batch", join(experiments, "sweep.yaml"), "--root", experiments]);
    assert.match(spawned[0]!.args[0]!, /bin\/cookbook\.js$/);
    assert.equal(spawned[0]!.options.outFile, join(experiments, "sweep.yaml.batch.log"));
    await h.press("n");
    await h.press("/no/such/experiment.ts");
    await h.press("\r");
    await h.waitFor((f) => f.includes("no experiment file at /no/such/experiment.ts"), "a missing file is refused");
    assert.equal(spawned.length, 1);
  } finally {
    h.unmount();
  }
});

test("a launched batch that dies before writing batch.json shows the end of its output", async () => {
  const root = tempRoot();
  const experiments = join(root, "experiments");
  mkdirSync(experiments, { recursive: true });
  writeFileSync(join(experiments, "bad.json"), "{}\n");
  const spawner = async (_args: readonly string[], options: SpawnOptions): Promise<number> => {
    writeFileSync(options.outFile, 'loading bad.json\nerror: bad.json: key "runs": expected an array\n');
    return 2 ** 22 + 54_321;
  };
  const h = renderApp(root, { first: { name: "batch" }, columns: 120, rows: 30, processes: new ProcessManager(undefined, spawner) });
  try {
    await h.press("n");
    await h.waitFor((f) => f.includes("bad.json"), "listed");
    await h.press("\r");
    const f = await h.waitFor((f) => f.includes("ended before writing batch.json"), "launch failure");
    assert.ok(f.includes('error: bad.json: key "runs": expected an array'));
  } finally {
    h.unmount();
  }
});
