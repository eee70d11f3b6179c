// On-policy distillation with its teacher on a second server: both servers are killed outright
// (SIGKILL) mid-run and started again on the same port. The teacher's sampler waits for its server
// and reconnects without disturbing the student; the student resumes from its last checkpoint.
// The run must end with every step logged exactly once and the final checkpoint recorded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, serveEnv, startServe, type ServeProcess } from "../serve/server.ts";
import { assertEveryStepOnce, finished, metricsRows, startCookbook, tempDir, waitUntil } from "./helpers.ts";

const STEPS = 80;
/** Which server goes down when the metrics reach each row count. */
const KILLS: readonly { at: number; server: "teacher" | "student" }[] = [
  { at: 15, server: "teacher" },
  { at: 30, server: "teacher" },
  { at: 45, server: "student" },
  { at: 60, server: "teacher" },
];

test("on_policy_distillation survives kills of its teacher's server and of its own, with every step logged once", async () => {
  const root = tempDir("cookbook-teacher-restart-");
  const env = serveEnv({ COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" });
  const stores = { student: join(root, "student-store"), teacher: join(root, "teacher-store") };
  const ports = { student: await freePort(), teacher: await freePort() };
  const servers: Record<"student" | "teacher", ServeProcess> = {
    student: await startServe(stores.student, env, { port: ports.student }),
    teacher: await startServe(stores.teacher, env, { port: ports.teacher }),
  };
  const logDir = join(root, "run");
  const datasets = JSON.stringify([{ dataset: "arithmetic", teacher: { base_model: "tiny-chat-teacher", base_url: servers.teacher.url } }]);
  const run = startCookbook(
    [
      "run",
      "on_policy_distillation",
      `base_url=${servers.student.url}`,
      `log_path=${logDir}`,
      `datasets=${datasets}`,
      `max_steps=${STEPS}`,
      "groups_per_batch=2",
      "group_size=2",
      "max_tokens=8",
      "eval_every=0",
      "test_problems=0",
      "save_every=2",
      "lora_rank=4",
      "behavior_if_log_dir_exists=raise",
    ],
    env,
  );
  const done = finished(run, 600_000);
  try {
    for (const kill of KILLS) {
      await waitUntil(() => metricsRows(logDir) >= kill.at || run.exitCode !== null, `${kill.at} metrics rows`, 300_000);
      assert.equal(run.exitCode, null, `the run ended before the ${kill.server} server's kill at row ${kill.at}`);
      await servers[kill.server].kill();
      // Down long enough for in-flight requests to fail and the clients to start backing off.
      await new Promise((r) => setTimeout(r, 1500));
      servers[kill.server] = await startServe(stores[kill.server], env, { port: ports[kill.server] });
    }
    const result = await done;
    assert.equal(result.code, 0, `on_policy_distillation failed:\n${result.stderr.slice(-3000)}`);
  } finally {
    run.kill("SIGKILL");
    await servers.student.kill();
    await servers.teacher.kill();
  }

  const log = assertEveryStepOnce(logDir, stores.student, STEPS);
  const teacherKills = KILLS.filter((k) => k.server === "teacher").length;
  const reconnects = log.match(/the teacher's server at \S+ is back; the teacher \(tiny-chat-teacher\) reconnected/g) ?? [];
  // Each teacher kill reconnects once; the student's kill may also cut a teacher request short.
  assert.ok(reconnects.length >= teacherKills, `${reconnects.length} teacher reconnects for ${teacherKills} kills:\n${log}`);
  const resumes = log.match(/no longer knows this run's session.*resuming from the last checkpoint/g) ?? [];
  assert.equal(resumes.length, 1, "the student resumed once, for its own server's kill; the teacher's kills did not restart the loop");
  // The teacher scored every step: no step trained without its KL.
  const metrics = readFileSync(join(logDir, "metrics.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const m of metrics) assert.equal(typeof m["teacher_kl"], "number", `step ${String(m["step"])} has no teacher_kl`);
});
