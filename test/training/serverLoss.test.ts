// Deciding whether a failed loop resumes on a server that went away: only failures a lost server
// produces, only once it answers again, only when it forgot our session or never got the
// request, and not forever when no new checkpoint is ever recorded.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendCheckpoint } from "../../src/runs/checkpoints.ts";
import type { ServerProbe, ServiceClient } from "../../src/tinker/clients.ts";
import { APIConnectionError, APIStatusError, InvalidArgumentError, RequestFailedError } from "../../src/tinker/errors.ts";
import { MAX_RESUMES_WITHOUT_PROGRESS, mayMeanServerLoss, ServerLossResumer, waitForServer } from "../../src/training/serverLoss.ts";
import { fakeTime } from "./fakeTime.ts";

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const runDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "server-loss-"));
  dirs.push(d);
  return d;
};

function probing(answers: ServerProbe[]): { client: ServiceClient; probes: () => number } {
  let i = 0;
  const client = {
    engineKind: "remote",
    probeServer: async () => answers[Math.min(i++, answers.length - 1)]!,
  } as unknown as ServiceClient;
  return { client, probes: () => i };
}

const lost404 = new APIStatusError("POST /api/v1/retrieve_future failed with HTTP 404", 404, { detail: "unknown request" });

function resumer(logDir: string, waitMs = 60_000): { r: ServerLossResumer; warnings: string[]; time: ReturnType<typeof fakeTime> } {
  const warnings: string[] = [];
  const time = fakeTime();
  const r = new ServerLossResumer({ logDir, baseUrl: "http://127.0.0.1:1", waitMs, log: { info: () => undefined, warn: (m) => warnings.push(m) }, ...time });
  return { r, warnings, time };
}

test("only failures a lost server produces count, also when wrapped as a cause", () => {
  assert.equal(mayMeanServerLoss(new APIConnectionError("connection refused")), true);
  assert.equal(mayMeanServerLoss(lost404), true);
  assert.equal(mayMeanServerLoss(new APIStatusError("x", 503, "")), true);
  assert.equal(mayMeanServerLoss(new RequestFailedError("worker died", "r1", "server")), true);
  assert.equal(mayMeanServerLoss(new Error("checkpoint 000004 was not saved", { cause: new APIConnectionError("reset") })), true);
  assert.equal(mayMeanServerLoss(new APIStatusError("bad lora rank", 400, "")), false);
  assert.equal(mayMeanServerLoss(new APIStatusError("conflict", 409, "")), false);
  assert.equal(mayMeanServerLoss(new RequestFailedError("bad tokens", "r1", "user")), false);
  assert.equal(mayMeanServerLoss(new InvalidArgumentError("bad datum")), false);
  assert.equal(mayMeanServerLoss(new Error("disk full")), false);
});

test("waitForServer backs off 1, 2, 4 s … until the server answers, and gives up when the wait is spent", async () => {
  const time = fakeTime();
  const back = probing(["unreachable", "unreachable", "unreachable", "session_lost"]);
  assert.equal(await waitForServer(back.client, { waitMs: 60_000, ...time }), "session_lost");
  assert.deepEqual(time.slept, [1000, 2000, 4000]);

  const never = fakeTime();
  assert.equal(await waitForServer(probing(["unreachable"]).client, { waitMs: 20_000, ...never }), "unreachable");
  assert.ok(never.now() <= 20_000, `waited ${never.now()} ms, more than the 20 s allowed`);
  assert.deepEqual(never.slept, [1000, 2000, 4000, 8000]);
});

test("a restarted server that forgot our session is resumed on; one that still knows it is not, unless the request never got through", async () => {
  const dir = runDir();
  const { r, warnings } = resumer(dir);
  assert.equal(await r.shouldResume(lost404, probing(["unreachable", "session_lost"]).client), true);
  assert.match(warnings.join("\n"), /does not answer .*HTTP 404.*waiting up to 60 s/);
  assert.match(warnings.at(-1)!, /no longer knows this run's session.*resume 1/);

  // The server still has the session: its 404 is about the request, not a restart.
  assert.equal(await r.shouldResume(lost404, probing(["alive"]).client), false);
  // The retry budget ran out while the server was away; it answers again with our session alive.
  appendCheckpoint(dir, { name: "000002", batch: 2, state_path: "tinker://m/weights/000002" });
  assert.equal(await r.shouldResume(new APIConnectionError("ECONNREFUSED"), probing(["alive"]).client), true);
  assert.equal(r.count, 2);

  // A caller's mistake is never resumed, and the server is not even asked.
  const asked = probing(["session_lost"]);
  assert.equal(await r.shouldResume(new APIStatusError("bad request", 400, ""), asked.client), false);
  assert.equal(asked.probes(), 0);
  // The embedded engine has no server to lose.
  assert.equal(await r.shouldResume(lost404, { engineKind: "embedded" } as unknown as ServiceClient), false);
});

test("a server that stays away past server_wait_seconds ends the run with the failure", async () => {
  const dir = runDir();
  const { r, warnings, time } = resumer(dir, 10_000);
  assert.equal(await r.shouldResume(new APIConnectionError("ECONNREFUSED"), probing(["unreachable"]).client), false);
  assert.ok(time.now() <= 10_000);
  assert.match(warnings.at(-1)!, /did not come back within 10 s \(server_wait_seconds\)/);
});

test(`resumes stop after ${MAX_RESUMES_WITHOUT_PROGRESS} in a row without a new checkpoint, and the count starts again after one`, async () => {
  const dir = runDir();
  const { r, warnings } = resumer(dir);
  const lost = () => probing(["session_lost"]).client;
  for (let i = 0; i < MAX_RESUMES_WITHOUT_PROGRESS; i++) assert.equal(await r.shouldResume(lost404, lost()), true, `resume ${i + 1}`);
  assert.equal(await r.shouldResume(lost404, lost()), false);
  assert.match(warnings.at(-1)!, new RegExp(`failed ${MAX_RESUMES_WITHOUT_PROGRESS + 1} times in a row without recording a new checkpoint`));
  appendCheckpoint(dir, { name: "000004", batch: 4, state_path: "tinker://m/weights/000004" });
  assert.equal(await r.shouldResume(lost404, lost()), true);
});
