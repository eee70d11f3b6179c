// The Batch screen in the real UI under tmux, on a fixture batch directory in the working
// directory's experiments/: B from home lists it, enter shows each run's state, key metric and
// trend, the failed run's error and the comparison table; o opens the dashboard with every run
// of the batch overlaid. Fails loudly when tmux is missing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execaSync } from "execa";
import { makeBatch, makeComparison } from "../../test/tui/batchFixtures.ts";
import { sleep, tmuxDriver } from "./tmuxDriver.ts";

const REPO = resolve(import.meta.dirname, "../..");
const SOCKET = `cookbook-e2e-batch-${process.pid}`;
const SESSION = "batch";

const { tmux, screen, keys, waitFor } = tmuxDriver(SOCKET, SESSION);

test("the Batch screen shows a batch's runs, their key metrics, an error and the comparison; o overlays the runs", { timeout: 300_000 }, async () => {
  const probe = execaSync("tmux", ["-V"], { reject: false });
  if (probe.failed) throw new Error("tmux is required for this end-to-end test (apt-get install tmux)");
  const project = mkdtempSync(join(tmpdir(), "cookbook-batch-e2e-"));
  const dir = makeBatch(
    join(project, "experiments"),
    "models-x-data",
    [
      { name: "tiny-arith", status: "done", steps: 30 },
      { name: "tiny-chat", status: "done", steps: 24 },
      { name: "small-arith", status: "failed", steps: 4, error: "engine: NaN loss at step 3" },
      { name: "small-chat", status: "queued" },
    ],
    { phase: "done" },
  );
  makeComparison(dir, "models-x-data", ["tiny-arith", "tiny-chat"]);
  // Warm tsx's compile cache so the first start is not slower than the waits below.
  execaSync(process.execPath, ["bin/cookbook.js", "recipes"], { cwd: REPO, reject: false });
  // Started from the project directory, as a person would: ./experiments is the default root.
  tmux(
    "new-session",
    "-d",
    "-s",
    SESSION,
    "-x",
    "120",
    "-y",
    "40",
    "-e",
    `COOKBOOK_LOG_ROOT=${join(project, "logs")}`,
    "-c",
    project,
    `env CI=0 CONTINUOUS_INTEGRATION=0 node ${join(REPO, "bin", "cookbook.js")}; sleep 600`,
  );
  try {
    await waitFor((s) => s.includes("Recipes (") && s.includes("B batches"), "home screen", 120_000);
    keys("B");
    const list = await waitFor((s) => s.includes("Batches  1 under experiments"), "batches list");
    assert.match(list, /done\s+models-x-data\s+2 done · 1 queued · 1 failed\s+yes/);
    keys("Enter");
    const batch = await waitFor((s) => s.includes("Batch models-x-data") && s.includes("Comparison  3 models"), "the batch");
    assert.match(batch, /done\s+tiny-arith\s+sl_basic\s+29\s+train_mean_nll\s+0\.6\d+\s+█/);
    assert.match(batch, /failed\s+small-arith\s+sl_basic\s+3\s+train_mean_nll\s+[\d.]+\s+error: engine: NaN loss/);
    assert.match(batch, /queued\s+small-chat/);
    assert.match(batch, /base:tiny-chat\s+baseline\s+10\.0%\s+3\.2/);
    assert.match(batch, /tiny-arith\s+run\s+62\.0% \*\s+1\.9/);
    assert.match(batch, /tiny-chat\s+run\s+40\.0%\s+1\.45 \*/);
    keys("j");
    keys("j");
    await waitFor((s) => s.includes("small-arith: sl_basic") && s.includes("error: engine: NaN loss at step 3"), "the failed run's error in full");
    keys("g");
    await waitFor((s) => s.includes("tiny-arith: sl_basic"), "first run selected again");
    keys("o");
    const overlay = await waitFor(
      (s) => s.includes("overlay: tiny-chat small-arith") && s.includes("train_mean_nll  last"),
      "dashboard with the batch overlaid",
    );
    assert.ok(overlay.startsWith("tiny-arith"));
    keys("Escape");
    await waitFor((s) => s.includes("Batch models-x-data"), "back on the batch");
    keys("q");
    await sleep(500);
  } finally {
    if (process.env["KEEP_TMUX"] !== "1") execaSync("tmux", ["-L", SOCKET, "kill-server"], { reject: false });
  }
  assert.ok(screen !== undefined);
});
