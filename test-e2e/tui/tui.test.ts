// Drives the real UI in tmux: open it, launch sl_basic from the recipe menu, wait for the loss
// chart to have points, raise the EMA weight and open the config pane, save a checkpoint from the
// checkpoints screen, stop the run, quit, and check the run directory. Fails loudly when tmux is
// missing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execaSync } from "execa";
import { sleep, tmuxDriver } from "./tmuxDriver.ts";

const REPO = resolve(import.meta.dirname, "../..");
const SOCKET = `cookbook-e2e-${process.pid}`;
const SESSION = "tui";

const { tmux, screen, keys, waitFor, selectedLine } = tmuxDriver(SOCKET, SESSION);

/** Goes to the top of the list, then presses j until the selected row (marked ›) mentions `name`, one move per render. */
async function select(name: string): Promise<void> {
  if (!selectedLine(screen()).includes(name)) {
    keys("g");
    await sleep(300);
  }
  for (let i = 0; i < 160; i++) {
    const current = selectedLine(screen());
    if (current.includes(name)) return;
    keys("j");
    await waitFor((s) => selectedLine(s) !== current, `cursor to move past ${current.trim()}`, 20_000);
  }
  throw new Error(`could not select ${name}; screen:\n${screen()}`);
}

async function setField(name: string, value: string): Promise<void> {
  await select(name);
  keys("Enter");
  await sleep(200);
  keys("C-u");
  keys("-l", value);
  await sleep(100);
  keys("Enter");
  await waitFor((s) => s.split("\n").some((l) => l.startsWith("› ") && l.includes(name) && l.includes(` ${value} `)), `${name}=${value}`, 10_000);
}

test("launch sl_basic from the menu, watch the loss, checkpoint and stop it from the UI", { timeout: 600_000 }, async () => {
  const probe = execaSync("tmux", ["-V"], { reject: false });
  if (probe.failed) throw new Error("tmux is required for this end-to-end test (apt-get install tmux)");
  const root = mkdtempSync(join(tmpdir(), "cookbook-tui-e2e-"));
  const runDir = join(root, "sl_basic");
  // Warm tsx's compile cache first: on a fresh clone the first start compiles every module, which
  // on a loaded 2-core machine can take longer than the home-screen wait below.
  execaSync(process.execPath, ["bin/cookbook.js", "recipes"], { cwd: REPO, reject: false });
  // CI=true (as .ci/run sets it) makes Ink skip every frame but the last; this test is a person
  // at a terminal, so the UI runs with CI switched off.
  tmux(
    "new-session",
    "-d",
    "-s",
    SESSION,
    "-x",
    "140",
    "-y",
    "42",
    "-e",
    `COOKBOOK_LOG_ROOT=${root}`,
    "-c",
    REPO,
    `env CI=0 CONTINUOUS_INTEGRATION=0 node bin/cookbook.js; sleep 600`,
  );
  try {
    await waitFor((s) => s.includes("Recipes (") && s.includes("? help"), "home screen", 120_000);
    await sleep(1000);
    await select("sl_basic");
    keys("Enter");
    // The form is longer than the window (the launch button may be scrolled off); the header and the status line are always shown.
    await waitFor((s) => s.includes("Launch sl_basic") && s.includes("ctrl+s launches") && /[✓✗] /.test(s), "launch form", 60_000);
    await setField("test_size", "0");
    await setField("batch_size", "4");
    await setField("max_steps", "2000");
    await setField("eval_every", "0");
    await setField("save_every", "0");
    await waitFor((s) => s.includes("✓ ready"), "valid form");
    keys("C-s");
    // The dashboard of the new run: the loss chart must have at least two points.
    // The chart can show points before the dashboard's next poll has seen run.json, so wait for
    // both rather than asserting liveness on the first frame with two points.
    const dash = await waitFor(
      (s) => {
        const m = /train_mean_nll {2}last \S+ {2}min \S+ {2}max \S+ {2}n (\d+)/.exec(s);
        return m !== null && Number(m[1]) >= 2 && s.includes("● live");
      },
      "loss chart with 2 points of a live run",
      240_000,
    );
    assert.ok(dash.includes("┤"), "chart drawn");
    // Issue 21's dashboard controls: the EMA weight in the header, the run's config beside the charts.
    keys("+");
    await waitFor((s) => s.includes("EMA 0.90"), "EMA weight in the header");
    keys("+");
    await waitFor((s) => s.includes("EMA 0.95"), "EMA weight raised");
    keys("c");
    const withConfig = await waitFor((s) => s.includes("config.json ("), "config pane");
    assert.match(withConfig, /save_every\s*=0/);
    keys("4");
    await waitFor((s) => s.includes("Checkpoints  0 in checkpoints.jsonl"), "checkpoints screen");
    keys("C");
    await waitFor((s) => /Checkpoints {2}[1-9]\d* in checkpoints\.jsonl/.test(s), "checkpoint saved", 120_000);
    keys("S");
    await waitFor((s) => s.includes("· run stopped"), "run stopped", 120_000);
    keys("q");
    await sleep(500);
  } finally {
    execaSync("tmux", ["-L", SOCKET, "kill-server"], { reject: false });
  }
  assert.ok(existsSync(runDir), `no run directory at ${runDir}`);
  const ckpts = readFileSync(join(runDir, "checkpoints.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(ckpts.length >= 1);
  assert.ok(
    ckpts.every((c) => typeof c.state_path === "string" && String(c.state_path).startsWith("tinker://")),
    JSON.stringify(ckpts),
  );
  const manifest = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")) as { status: string; recipe: string };
  assert.equal(manifest.recipe, "sl_basic");
  assert.equal(manifest.status, "stopped");
  assert.ok(existsSync(join(runDir, "stdout.log")));
});
