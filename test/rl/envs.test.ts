import { test } from "node:test";
import assert from "node:assert/strict";
import { TinkerTokenCompleter } from "../../src/completers.ts";
import { trajectoryToData } from "../../src/rl/dataProcessing.ts";
import { EnvFromMessageEnv, type MessageEnv, type MessageStepResult } from "../../src/rl/messageEnv.ts";
import { ProblemEnv, ProblemGroupBuilder } from "../../src/rl/problemEnv.ts";
import type { Message, RLRenderer } from "../../src/renderers/policyRenderer.ts";
import { doGroupRollout, doSingleRollout } from "../../src/rl/rollouts.ts";
import type { ModelInput } from "../../src/tinker/types.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import { FakeSamplingClient, tokensOf } from "./fakes.ts";

// A character-level renderer: <role marker> chars <END> per message, then the assistant marker.
const END = 999;
const ROLE: Record<string, number> = { system: 1000, user: 1001, assistant: 1002 };
const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const str = (t: readonly number[]) => String.fromCharCode(...t);

const renderer: RLRenderer = {
  buildGenerationPrompt(messages: readonly Message[]): ModelInput {
    const tokens: number[] = [];
    for (const m of messages) tokens.push(ROLE[m.role] ?? 1009, ...text(typeof m.content === "string" ? m.content : ""), END);
    tokens.push(ROLE.assistant);
    return { chunks: [{ type: "encoded_text", tokens }] };
  },
  getStopSequences: () => [END],
  parseResponse(tokens: readonly number[]) {
    const i = tokens.indexOf(END);
    if (i < 0) return { message: { role: "assistant", content: str(tokens) }, termination: "malformed" as const };
    return { message: { role: "assistant", content: str(tokens.slice(0, i)) }, termination: "stop_sequence" as const };
  },
};

test("every src/renderers Renderer can drive RL envs (checked by the type checker)", () => {
  const fits: Renderer extends RLRenderer ? true : false = true;
  assert.equal(fits, true);
});

class AddEnv extends ProblemEnv {
  getQuestion() {
    return "2+2=";
  }
  checkAnswer(r: string) {
    return r.trim() === "4";
  }
  checkFormat(r: string) {
    return r.length > 0;
  }
  getReferenceAnswer() {
    return "4";
  }
}

test("ProblemEnv: reward = format_coef·(format_ok − 1) + correct", async () => {
  const env = new AddEnv(renderer, { convoPrefix: [{ role: "system", content: "math" }] });
  const init = await env.initialObservation();
  assert.deepEqual(tokensOf(init.observation), [1000, ...text("math"), END, 1001, ...text("2+2="), END, 1002]);
  assert.deepEqual(init.stopCondition, [END]);
  const cases: [number[], number, number, number][] = [
    [[...text("4"), END], 1, 1, 1],
    [text("4"), 0.9, 0, 1],
    [[...text("5"), END], 0, 1, 0],
    [text("5"), -0.1, 0, 0],
  ];
  for (const [action, reward, format, correct] of cases) {
    const r = await new AddEnv(renderer).step(action);
    assert.ok(Math.abs(r.reward - reward) < 1e-12, `reward ${r.reward} for ${str(action)}`);
    assert.deepEqual(r.metrics, { format, correct, "stop/completed": 1 });
    assert.equal(r.episodeDone, true);
    assert.equal(r.messages?.at(-1)?.role, "assistant");
  }
});

test("ProblemGroupBuilder rolls out numEnvs copies tagged with the dataset name", async () => {
  const answers = ["4", "7", "4"];
  const sampler = new FakeSamplingClient((_p, call) => ({ tokens: [...text(answers[call % 3]), END] }));
  const group = await doGroupRollout(new ProblemGroupBuilder(() => new AddEnv(renderer), 3, "arith"), new TinkerTokenCompleter(sampler, 8));
  assert.deepEqual(group.getTotalRewards(), [1, 0, 1]);
  assert.deepEqual(new ProblemGroupBuilder(() => new AddEnv(renderer), 1, "arith").loggingTags(), ["arith"]);
});

/** Guess a digit: the user says higher/lower until the guess is right. */
class GuessEnv implements MessageEnv {
  messages: Message[] = [{ role: "user", content: "guess" }];
  constructor(readonly secret: number) {}
  async initialObservation() {
    return [...this.messages];
  }
  async step(message: Message): Promise<MessageStepResult> {
    const guess = Number(message.content);
    this.messages = [...this.messages, message];
    if (guess === this.secret) return { reward: 1, episodeDone: true, nextMessages: this.messages, metrics: { "stop/completed": 1 } };
    this.messages = [...this.messages, { role: "user", content: guess < this.secret ? "higher" : "lower" }];
    return { reward: 0, episodeDone: false, nextMessages: [...this.messages] };
  }
}

test("EnvFromMessageEnv: multi-turn conversation renders as one growing sequence → one datum", async () => {
  const guesses = ["3", "7", "5"];
  const sampler = new FakeSamplingClient((_p, call) => ({ tokens: [...text(guesses[call]), END] }));
  const env = new EnvFromMessageEnv(renderer, new GuessEnv(5));
  const traj = await doSingleRollout(new TinkerTokenCompleter(sampler, 8), env);
  assert.equal(traj.transitions.length, 3);
  assert.deepEqual(
    traj.transitions.map((t) => t.reward),
    [0, 0, 1],
  );
  assert.equal(traj.stopReason, "completed");
  assert.equal(traj.transitions[2].messages?.length, 6);
  const data = trajectoryToData(traj, 1);
  assert.equal(data.length, 1, "each prompt extends the previous prompt + response");
  const mask = data[0].loss_fn_inputs.mask.data;
  assert.equal(mask.filter((m) => m === 1).length, 3 * 2, "three 2-token answers are trained");
});

test("EnvFromMessageEnv: parse failure, length stop and context overflow end the episode", async () => {
  const parseFail = await new EnvFromMessageEnv(renderer, new GuessEnv(5), { failedParseReward: -2 }).step(text("5"), { stopReason: "stop" });
  assert.equal(parseFail.reward, -2);
  assert.equal(parseFail.episodeDone, true);
  assert.deepEqual(parseFail.metrics, { parse_error: 1, "stop/parse_error": 1 });

  const cut = await new EnvFromMessageEnv(renderer, new GuessEnv(5)).step(text("55555"), { stopReason: "length" });
  assert.equal(cut.reward, -0.1);
  assert.equal(cut.metrics?.["stop/max_tokens"], 1);

  const small = new EnvFromMessageEnv(renderer, new GuessEnv(5), { maxTrajectoryTokens: 14, maxGenerationTokens: 2 });
  const init = await small.initialObservation();
  assert.ok(!("reward" in init), "the 8-token prompt fits");
  const overflow = await small.step([...text("1"), END], { stopReason: "stop" });
  assert.equal(overflow.episodeDone, true);
  assert.equal(overflow.reward, -0.1);
  assert.equal(overflow.metrics?.["stop/context_overflow"], 1);

  const tooSmall = new EnvFromMessageEnv(renderer, new GuessEnv(5), { maxTrajectoryTokens: 4 });
  const o = await tooSmall.initialObservation();
  assert.ok("reward" in o && o.reward === -0.1);
});
