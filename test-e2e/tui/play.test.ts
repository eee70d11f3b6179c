// A scripted person plays guess_number in the real UI, in tmux: select the recipe on the home
// screen, press p, and answer by binary search on the environment's "Too low" / "Too high" until
// the episode ends; the screen must show each reward and the episode's summary. Fails loudly when
// tmux is missing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execaSync } from "execa";
import { tmuxDriver } from "./tmuxDriver.ts";

const REPO = resolve(import.meta.dirname, "../..");
const SOCKET = `cookbook-play-e2e-${process.pid}`;
const SESSION = "play";

const { tmux, screen, keys, waitFor, selectedLine } = tmuxDriver(SOCKET, SESSION);

test("a scripted person plays guess_number to the end on the Play screen", { timeout: 300_000 }, async () => {
  const probe = execaSync("tmux", ["-V"], { reject: false });
  if (probe.failed) throw new Error("tmux is required for this end-to-end test (apt-get install tmux)");
  const root = mkdtempSync(join(tmpdir(), "cookbook-play-e2e-"));
  execaSync(process.execPath, ["bin/cookbook.js", "recipes"], { cwd: REPO, reject: false });
  tmux(
    "new-session",
    "-d",
    "-s",
    SESSION,
    "-x",
    "120",
    "-y",
    "45",
    "-e",
    `COOKBOOK_LOG_ROOT=${root}`,
    "-c",
    REPO,
    "env CI=0 CONTINUOUS_INTEGRATION=0 node bin/cookbook.js; sleep 600",
  );
  try {
    await waitFor((s) => s.includes("Recipes (") && s.includes("? help"), "home screen", 120_000);
    for (let i = 0; i < 40 && !selectedLine(screen()).includes("guess_number"); i++) {
      const current = selectedLine(screen());
      keys("j");
      await waitFor((s) => selectedLine(s) !== current, "the cursor to move", 20_000);
    }
    assert.ok(selectedLine(screen()).includes("guess_number"), screen());
    keys("p");
    await waitFor((s) => s.includes("observation (as the model receives it):") && s.includes("> ▏"), "the Play screen", 60_000);
    let lo = 0;
    let hi = 1023;
    for (let turn = 1; turn <= 12; turn++) {
      const mid = Math.floor((lo + hi) / 2);
      keys("-l", `Guess: ${mid}`);
      keys("Enter");
      // This reply's reward: a reward line after the last "you: Guess: <mid>".
      const rewarded = (s: string): boolean => {
        const at = s.lastIndexOf(`you: Guess: ${mid}`);
        return at >= 0 && s.indexOf("⟶ reward", at) > at;
      };
      const s = await waitFor(rewarded, `the reward of guess ${turn}`, 30_000);
      if (s.includes("episode done")) {
        const done = /episode done: (\d+) turns, step rewards [-\d.e]+ \+ group reward [-\d.e]+ = total/.exec(s);
        assert.ok(done, s);
        assert.equal(Number(done[1]), turn, "one turn per reply");
        keys("Escape");
        await waitFor((s) => s.includes("Recipes ("), "back on the home screen", 20_000);
        return;
      }
      const replies = s.match(/User: (Too low|Too high|Correct)/g) ?? [];
      const last = replies.at(-1);
      if (last === "User: Too low") lo = mid + 1;
      else if (last === "User: Too high") hi = mid - 1;
      else assert.fail(`no answer from the environment after guess ${turn}:\n${s}`);
    }
    assert.fail(`the episode did not end:\n${screen()}`);
  } finally {
    execaSync("tmux", ["-L", SOCKET, "kill-server"], { reject: false });
  }
});
