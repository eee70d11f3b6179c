import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { escapeHtml, renderRolloutHtml } from "../../src/log/transcripts/html.ts";
import { iterationDir, serializeRolloutSummaries, writeRolloutSummaries } from "../../src/log/transcripts/rolloutSummaries.ts";
import { TrajectoryGroup, type Trajectory } from "../../src/rl/types.ts";
import { readTranscripts } from "../../src/runs/transcripts.ts";
import { ints } from "./fakes.ts";

function withMessages(answer: string, reward: number): Trajectory {
  return {
    transitions: [
      {
        ob: ints([1, 2, 3]),
        ac: { tokens: [4, 5], logprobs: [-1, -1], stopReason: "stop" },
        reward,
        episodeDone: true,
        metrics: { correct: reward, "stop/completed": 1 },
        logs: { reference_answer: "4", note: "x".repeat(200) },
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "What is 2+2? <b>bold</b>" },
          { role: "assistant", content: answer },
        ],
      },
    ],
    finalOb: { chunks: [] },
    stopReason: "completed",
  };
}

function tokenOnly(): Trajectory {
  return {
    transitions: [
      { ob: ints([65, 66]), ac: { tokens: [67], logprobs: [-1], stopReason: "stop" }, reward: 0, episodeDone: false, metrics: {}, logs: {} },
      { ob: ints([65, 66, 67, 68]), ac: { tokens: [69], logprobs: [-1], stopReason: "length" }, reward: 1, episodeDone: true, metrics: {}, logs: {} },
    ],
    finalOb: ints([1, 2, 3, 4, 5]),
    stopReason: null,
  };
}

const decode = (tokens: number[]) => String.fromCharCode(...tokens);

test("rollout summary records have the cookbook's shape plus prompt/response text", () => {
  const g0 = new TrajectoryGroup([withMessages("4", 1), withMessages("5", 0)], [0, 0.5], [{ judge: 1 }, {}]);
  const g1 = new TrajectoryGroup([tokenOnly()], [0], [{}]);
  const records = serializeRolloutSummaries({
    split: "train",
    iteration: 7,
    groups: [
      { trajectoryGroup: g0, tags: ["math"], samplingClientStep: 6 },
      { trajectoryGroup: g1, tags: [], samplingClientStep: null },
    ],
    decode,
  });
  assert.equal(records.length, 3);
  const r = records[1];
  assert.deepEqual(Object.keys(r).sort(), [
    "final_ob_len",
    "final_reward",
    "group_idx",
    "iteration",
    "prompt",
    "response",
    "sampling_client_step",
    "schema_version",
    "split",
    "steps",
    "stop_reason",
    "tags",
    "total_reward",
    "traj_idx",
    "trajectory_metrics",
  ]);
  assert.equal(r.schema_version, 1);
  assert.equal(r.split, "train");
  assert.equal(r.iteration, 7);
  assert.equal(r.group_idx, 0);
  assert.equal(r.traj_idx, 1);
  assert.deepEqual(r.tags, ["math"]);
  assert.equal(r.sampling_client_step, 6);
  assert.equal(r.total_reward, 0.5);
  assert.equal(r.final_reward, 0.5);
  assert.deepEqual(r.trajectory_metrics, {});
  assert.equal(r.final_ob_len, 0);
  assert.deepEqual(r.steps, [
    {
      step_idx: 0,
      ob_len: 3,
      ac_len: 2,
      ac_tokens: [4, 5],
      messages: [{ role: "assistant", text: "5" }],
      reward: 0,
      episode_done: true,
      metrics: { correct: 0, "stop/completed": 1 },
      logs: { reference_answer: "4", note: "x".repeat(200) },
    },
  ]);
  assert.equal(r.prompt, "system: Be brief.\n\nuser: What is 2+2? <b>bold</b>");
  assert.equal(r.response, "5");
  // Without messages the decoder supplies the text.
  const t = records[2];
  assert.equal(t.group_idx, 1);
  assert.equal(t.prompt, "AB");
  assert.equal(t.response, "C\n\nE");
  assert.equal(t.final_ob_len, 5);
  assert.equal(t.steps.length, 2);
  assert.equal(t.total_reward, 1);
  // Without either, the text fields are null rather than invented.
  const bare = serializeRolloutSummaries({ split: "test", iteration: 0, groups: [{ trajectoryGroup: g1, tags: [], samplingClientStep: 0 }] });
  assert.equal(bare[0].prompt, null);
  for (const rec of records) assert.doesNotThrow(() => JSON.parse(JSON.stringify(rec)));
});

test("summaries land in iteration_NNNNNN/<base>_rollout_summaries.jsonl, one record per line", () => {
  const dir = mkdtempSync(join(tmpdir(), "rl-transcripts-"));
  const g = new TrajectoryGroup([withMessages("4", 1), withMessages("5", 0)], [0, 0], [{}, {}]);
  const path = writeRolloutSummaries({
    logPath: dir,
    baseName: "train",
    split: "train",
    iteration: 12,
    groups: [{ trajectoryGroup: g, tags: [], samplingClientStep: 12 }],
  });
  assert.equal(path, join(dir, "iteration_000012", "train_rollout_summaries.jsonl"));
  assert.equal(iterationDir(dir, 3), join(dir, "iteration_000003"));
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[1]).traj_idx, 1);
  assert.ok(!existsSync(`${path}.tmp-${process.pid}`));
});

test("group reward logs (a tournament's results) are written per trajectory and read back; empty logs write nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "rl-transcripts-"));
  const g = new TrajectoryGroup([withMessages("4", 1), withMessages("5", 0)], [1, -1], [{}, {}], [], [{ vs_1: 2, matchups: 2 }, {}]);
  const path = writeRolloutSummaries({
    logPath: dir,
    baseName: "train",
    split: "train",
    iteration: 0,
    groups: [{ trajectoryGroup: g, tags: [], samplingClientStep: 0 }],
  });
  const raw = readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(raw[0]!.trajectory_logs, { vs_1: 2, matchups: 2 });
  assert.equal("trajectory_logs" in raw[1]!, false);
  const back = readTranscripts(dir, 0);
  assert.deepEqual(back[0]!.trajectory_logs, { vs_1: 2, matchups: 2 });
  assert.equal(back[1]!.trajectory_logs, undefined);
});

/** A two-turn tool episode: the policy calls the calculator, the tool answers, the policy answers. */
function toolEpisode(): Trajectory {
  const prompt = [{ role: "user", content: "What is 123 + 456?" }];
  const call = {
    role: "assistant",
    content: "",
    tool_calls: [{ type: "function" as const, id: null, function: { name: "calculator", arguments: '{"expression":"123+456"}' } }],
  };
  const result = { role: "tool", content: "579", name: "calculator" };
  const answer = { role: "assistant", content: "579" };
  const tr = (messages: object[], reward: number, done: boolean) => ({
    ob: ints([1]),
    ac: { tokens: [2], logprobs: [-1], stopReason: "stop" as const },
    reward,
    episodeDone: done,
    metrics: {},
    logs: {},
    messages: messages as never,
  });
  return { transitions: [tr([...prompt, call], 0, false), tr([...prompt, call, result, answer], 1, true)], finalOb: { chunks: [] }, stopReason: "completed" };
}

test("multi-turn episodes: each step records what its turn added — tool calls, tool results — and the HTML interleaves the rewards", () => {
  const g = new TrajectoryGroup([toolEpisode()], [0], [{}]);
  const [rec] = serializeRolloutSummaries({ split: "train", iteration: 0, groups: [{ trajectoryGroup: g, tags: [], samplingClientStep: 0 }] });
  assert.deepEqual(
    rec!.steps.map((st) => st.messages),
    [
      [{ role: "assistant", text: '[tool call] calculator({"expression":"123+456"})' }],
      [
        { role: "tool (calculator)", text: "579" },
        { role: "assistant", text: "579" },
      ],
    ],
  );
  assert.equal(rec!.prompt, "user: What is 123 + 456?");
  const html = renderRolloutHtml({ title: "t", groups: [{ trajectoryGroup: g, tags: [], samplingClientStep: 0 }] });
  // Inside the conversation: the call, its reward, the tool result, the answer, its reward — in order.
  let at = html.indexOf("Conversation (each turn");
  assert.ok(at >= 0, "a multi-turn episode is shown as a conversation");
  for (const needle of ["[tool call] calculator", "turn 1: reward", "tool (calculator)", "579", "turn 2: reward", "episode done"]) {
    const next = html.indexOf(needle, at);
    assert.ok(next > at, `${needle} after position ${at}`);
    at = next;
  }
});

test("HTML report escapes content, shows roles, rewards and advantages, and limits groups", () => {
  const evil = withMessages(`<script>alert("x")</script> & done`, 1);
  const g0 = new TrajectoryGroup([evil, withMessages("5", 0)], [0, 0], [{}, {}]);
  const g1 = new TrajectoryGroup([withMessages("6", 0)], [0], [{}]);
  const g2 = new TrajectoryGroup([withMessages("SHOULD-NOT-APPEAR", 0)], [0], [{}]);
  const html = renderRolloutHtml({
    title: "RL Iteration 3 <x>",
    groups: [
      { trajectoryGroup: g0, tags: ["math&co"], samplingClientStep: 3, advantagesG: [0.5, -0.5] },
      { trajectoryGroup: g1, tags: [], samplingClientStep: 3 },
      { trajectoryGroup: g2, tags: [], samplingClientStep: 3 },
    ],
    maxGroups: 2,
    generatedAt: new Date("2026-01-02T03:04:05Z"),
  });
  assert.ok(html.startsWith("<!doctype html>"));
  assert.ok(!html.includes("<script>"), "no raw script tag");
  assert.ok(html.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; done"));
  assert.ok(html.includes("What is 2+2? &lt;b&gt;bold&lt;/b&gt;"));
  assert.ok(html.includes("<title>RL Iteration 3 &lt;x&gt;</title>"));
  assert.ok(html.includes("math&amp;co"));
  assert.ok(html.includes("Generated 2026-01-02T03:04:05.000Z"));
  assert.ok(html.includes('class="msg role-assistant"') && html.includes('class="msg role-user"') && html.includes('class="msg role-system"'));
  assert.ok(html.includes('id="group-0"') && html.includes('id="group-1"'));
  assert.ok(!html.includes("SHOULD-NOT-APPEAR") && !html.includes('id="group-2"'));
  assert.ok(html.includes("<th>advantage</th>"));
  assert.ok(html.includes("Trajectory 0 — total reward 1, advantage 0.500"));
  assert.ok(html.includes("Trajectory 1 — total reward 0, advantage -0.500"));
  // A long diagnostic is collapsible, short ones are inline.
  assert.ok(html.includes('<details class="long">'));
  assert.ok(html.includes("<th>reference_answer</th><td>4</td>"));
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
});
