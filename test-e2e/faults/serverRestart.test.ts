// The remote path's worst fault: the server is killed outright (SIGKILL, all its processes) in the
// middle of a run and started again on the same port with the same checkpoint store, five times.
// `cookbook run sl_basic base_url=…` must ride it out by itself: wait for the server with backoff,
// resume from its last checkpoint, and end with every step logged exactly once, every recorded
// checkpoint present in the store, and the final checkpoint recorded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { freePort, serveEnv, startServe, type ServeProcess } from "../serve/server.ts";
import { SMALL_SL, assertEveryStepOnce, finished, metricsRows, startCookbook, tempDir, waitUntil } from "./helpers.ts";

const KILLS = 5;
const STEPS = 240;
/** Rows between kills: several checkpoints (save_every=2) each time, so every resume has progress. */
const ROWS_PER_KILL = 30;

test(`sl_basic against cookbook serve survives ${KILLS} server kills and restarts with every step logged once`, async () => {
  const root = tempDir("cookbook-restart-");
  const store = join(root, "served-store");
  const logDir = join(root, "run");
  const env = serveEnv({ COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" });
  const port = await freePort();
  let server: ServeProcess = await startServe(store, env, { port });
  const run = startCookbook(
    ["run", "sl_basic", `base_url=${server.url}`, `log_path=${logDir}`, ...SMALL_SL, `max_steps=${STEPS}`, "behavior_if_log_dir_exists=raise"],
    env,
  );
  const done = finished(run, 600_000);
  const killedAt: number[] = [];
  try {
    for (let k = 1; k <= KILLS; k++) {
      await waitUntil(() => metricsRows(logDir) >= k * ROWS_PER_KILL || run.exitCode !== null, `${k * ROWS_PER_KILL} metrics rows`, 300_000);
      assert.equal(run.exitCode, null, `the run ended before kill ${k}`);
      killedAt.push(metricsRows(logDir));
      await server.kill();
      // Down long enough for in-flight requests to fail and the client to start backing off.
      await new Promise((r) => setTimeout(r, 1500));
      server = await startServe(store, env, { port });
    }
    const result = await done;
    assert.equal(result.code, 0, `sl_basic failed after kills at rows ${killedAt.join(", ")}:\n${result.stderr.slice(-3000)}`);
  } finally {
    run.kill("SIGKILL");
    await server.kill();
  }

  const log = assertEveryStepOnce(logDir, store, STEPS);
  const resumes = log.match(/no longer knows this run's session.*resuming from the last checkpoint/g) ?? [];
  assert.equal(resumes.length, KILLS, `one resume per kill (kills at rows ${killedAt.join(", ")})`);
  // Each resume continued from a recorded checkpoint of an earlier model, not from scratch.
  const resumedFrom = [...log.matchAll(/resumed from (tinker:\/\/\S+) at step (\d+)/g)].map((m) => ({ path: m[1]!, step: Number(m[2]) }));
  assert.equal(resumedFrom.length, KILLS);
  const recorded = new Set(readCheckpoints(logDir).map((r) => r.state_path));
  for (const r of resumedFrom) {
    assert.ok(recorded.has(r.path), `resumed from ${r.path}, which checkpoints.jsonl does not list`);
    assert.ok(r.step > 0, "a resume started over from step 0");
  }
});
