// The two-player coordinator through real rollouts: a scripted policy takes both seats of a
// self-play group (each seat its own rollout, meeting in the coordinator); turns alternate, each
// seat sees the game from its side, and both trajectories get the right rewards — for a win, a
// forfeit by an illegal move (terminate, feedback and mask), a game lost before the second seat's
// first turn, a fixed opponent, and a failed rollout that must not leave the other seat waiting.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { StopCondition, TokenCompleter, TokensWithLogprobs } from "../../src/completers.ts";
import { SelfPlayGroupBuilder, VsOpponentGroupBuilder, type SeatCommon } from "../../src/multiAgent/groups.ts";
import { SeatEnv } from "../../src/multiAgent/seatEnv.ts";
import { newTicTacToe } from "../../src/multiAgent/games/ticTacToeEnv.ts";
import { minimaxOpponent } from "../../src/multiAgent/games/ticTacToeOpponents.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { doGroupRollout } from "../../src/rl/rollouts.ts";
import { modelInputToInts } from "../../src/rl/tokenSeq.ts";
import { PARSE_ERROR_MASKED_METRIC_KEY, type Trajectory } from "../../src/rl/types.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { simpleRolloutConfig, type ParseErrorPolicy } from "../../src/toolUse/rolloutLimits.ts";
import type { ModelInput } from "../../src/tinker/types.ts";

const tokenizer = await getTokenizer("tiny-chat");
const renderer = getRenderer("role_colon", tokenizer);

function common(parseError: ParseErrorPolicy = { mode: "terminate", reward: -1, max_retries: 0 }): SeatCommon {
  const rollout = simpleRolloutConfig({ maxTurns: 6 });
  rollout.parse_error = parseError;
  return { renderer, rollout, maxGenerationTokens: 6 };
}

/** Plays the scripted replies of each mark in order; records every prompt it was shown. */
class ScriptedPolicy implements TokenCompleter {
  readonly prompts: { mark: string; text: string }[] = [];
  private readonly next = new Map<string, number>();

  constructor(private readonly script: Record<string, string[]>) {}

  async complete(input: ModelInput, _stop: StopCondition): Promise<TokensWithLogprobs> {
    const text = tokenizer.decode(modelInputToInts(input));
    const mark = /You are (X|O)/.exec(text)?.[1];
    if (mark === undefined) throw new Error(`no seat in prompt ${text}`);
    this.prompts.push({ mark, text });
    const i = this.next.get(mark) ?? 0;
    this.next.set(mark, i + 1);
    const reply = this.script[mark]?.[i];
    if (reply === undefined) throw new Error(`${mark} has no reply left for turn ${i}`);
    const tokens = tokenizer.encode(` ${reply}\n\nUser:`, { addSpecialTokens: false });
    return { tokens, logprobs: tokens.map(() => -1), stopReason: "stop" };
  }
}

const total = (t: Trajectory) => t.transitions.reduce((s, x) => s + x.reward, 0);
const last = (t: Trajectory) => t.transitions.at(-1)!;

test("self-play: X and O alternate in two rollouts, each sees its own side, and the winner and loser get +1 and −1", async () => {
  const policy = new ScriptedPolicy({ X: ["1", "2", "3"], O: ["5", "9"] });
  const group = await doGroupRollout(new SelfPlayGroupBuilder(newTicTacToe, 1, common(), ["t"]), policy);
  const [x, o] = group.trajectoriesG;
  assert.equal(x.transitions.length, 3);
  assert.equal(o.transitions.length, 2);
  assert.deepEqual([total(x), total(o)], [1, -1]);
  assert.deepEqual(group.getTotalRewards(), [1, -1]);
  assert.equal(last(x).metrics["win_rate"], 1);
  assert.equal(last(o).metrics["loss_rate"], 1);
  assert.equal(last(x).metrics["as_x/win_or_draw"], 1);
  assert.equal(last(o).metrics["as_o/win_or_draw"], 0);
  assert.deepEqual(
    policy.prompts.map((p) => p.mark),
    ["X", "O", "X", "O", "X"],
    "turns alternate",
  );
  // What each seat was shown, as the model receives it.
  assert.match(
    policy.prompts[0].text,
    /^<\|endoftext\|>System: Tic-tac-toe\. You are X\. Three in a row wins\. Reply with a free square\.\n\nUser: {2}1 2 3\n 4 5 6\n 7 8 9\nFree: 1 2 3 4 5 6 7 8 9\nYour move\?\n\nAssistant:$/,
  );
  assert.match(policy.prompts[1].text, /You are O[\s\S]*User: X took 1\.\n X 2 3\n 4 5 6\n 7 8 9\nFree: 2 3 4 5 6 7 8 9\nYour move\?\n\nAssistant:$/);
  assert.match(
    policy.prompts[2].text,
    /Assistant: 1\n\nUser: O took 5\.\n X 2 3\n 4 O 6\n 7 8 9\nFree: 2 3 4 6 7 8 9\nYour move\?\n\nAssistant:$/,
    "X's conversation grows by its move and O's answer",
  );
  // Each turn's observation extends the previous one and its action, so the episode trains as one sequence.
  const ob0 = modelInputToInts(x.transitions[0].ob);
  const ob1 = modelInputToInts(x.transitions[1].ob);
  assert.deepEqual(ob1.slice(0, ob0.length + x.transitions[0].ac.tokens.length), [...ob0, ...x.transitions[0].ac.tokens]);
  // Transcripts: player names on every message, the result told to both.
  const xMessages = last(x).messages ?? [];
  assert.deepEqual(
    xMessages.slice(-2).map((m) => [m.role, m.name]),
    [
      ["assistant", "X"],
      ["user", "O"],
    ],
  );
  assert.match(String(xMessages.at(-1)?.content), /X wins\.$/);
  assert.match(String(last(o).messages?.at(-1)?.content), /^X took 3\.\n X X X\n 4 O 6\n 7 8 O\nX wins\.$/);
});

test("an illegal move loses under terminate; feedback lets it retry; mask drops the game untrained", async () => {
  const terminate = await doGroupRollout(new SelfPlayGroupBuilder(newTicTacToe, 1, common(), ["t"]), new ScriptedPolicy({ X: ["5", "1"], O: ["5"] }));
  const [x, o] = terminate.trajectoriesG;
  assert.deepEqual([total(x), total(o)], [1, -1], "O took a taken square: O gets the parse-error reward, X wins");
  assert.equal(last(o).metrics["illegal_rate"], 1);
  assert.equal(last(o).metrics["stop/parse_error"], 1);
  assert.equal(last(x).metrics["opponent_illegal_rate"], 1);
  assert.match(String(last(x).messages?.at(-1)?.content), /Illegal move by O: square 5 is taken\. X wins\./);

  const feedback = await doGroupRollout(
    new SelfPlayGroupBuilder(newTicTacToe, 1, common({ mode: "feedback", reward: -0.25, max_retries: 1 }), ["t"]),
    new ScriptedPolicy({ X: ["5", "1", "9"], O: ["5", "2", "3"] }),
  );
  const [fx, fo] = feedback.trajectoriesG;
  assert.equal(fo.transitions[0].reward, -0.25, "the illegal try costs the feedback reward");
  assert.equal(fo.transitions[0].metrics["illegal_move"], 1);
  assert.match(String(fo.transitions[1].messages?.at(-2)?.content), /^Illegal move: square 5 is taken\.\n/);
  assert.deepEqual([total(fx), total(fo)], [1, -1.25], "then the game goes on to X's diagonal 5-1-9");

  const mask = await doGroupRollout(
    new SelfPlayGroupBuilder(newTicTacToe, 1, common({ mode: "mask", reward: -1, max_retries: 0 }), ["t"]),
    new ScriptedPolicy({ X: ["5", "1"], O: ["seven"] }),
  );
  const [mx, mo] = mask.trajectoriesG;
  assert.equal(last(mo).metrics[PARSE_ERROR_MASKED_METRIC_KEY], 1);
  assert.deepEqual([total(mx), total(mo)], [0, 0]);
  assert.equal(last(mx).metrics["abandoned"], 1);
  assert.equal(last(mx).metrics["win_rate"], undefined, "an abandoned game has no result");
});

test("a game lost on X's first move gives O one empty turn carrying its win", async () => {
  const group = await doGroupRollout(new SelfPlayGroupBuilder(newTicTacToe, 1, common(), ["t"]), new ScriptedPolicy({ X: ["0"], O: [] }));
  const [x, o] = group.trajectoriesG;
  assert.deepEqual([total(x), total(o)], [-1, 1]);
  assert.equal(o.transitions.length, 1);
  assert.equal(o.transitions[0].ac.tokens.length, 0, "nothing sampled, nothing trained");
  assert.equal(o.transitions[0].metrics["no_turn"], 1);
});

test("against a fixed opponent each env is its own game; the opponent answers inside the policy's step", async () => {
  const policy = new ScriptedPolicy({ X: ["1", "2", "3", "4", "6"], O: ["1", "2", "3", "4"] });
  const group = await doGroupRollout(new VsOpponentGroupBuilder(newTicTacToe, [0, 1], (i) => minimaxOpponent(i), common(), ["t"]), policy);
  const [asX, asO] = group.trajectoriesG;
  // Minimax never loses; this naive policy cannot win.
  for (const t of [asX, asO]) assert.ok(total(t) <= 0, `minimax lost a game: ${total(t)}`);
  assert.match(String(asO.transitions[0].messages?.[1]?.content), /^X took \d\./, "minimax as X opened before the policy's first turn");
});

test("a seat whose partner's rollout fails is woken by the group's cleanup instead of waiting forever", async () => {
  const broken: TokenCompleter = {
    async complete(input) {
      const text = tokenizer.decode(modelInputToInts(input));
      if (text.includes("You are O")) throw new Error("sampler down");
      return { tokens: tokenizer.encode(" 5\n\nUser:", { addSpecialTokens: false }), logprobs: null, stopReason: "stop" };
    },
  };
  await assert.rejects(doGroupRollout(new SelfPlayGroupBuilder(newTicTacToe, 1, common(), ["t"]), broken), /sampler down/);
});

test("history_turns=0: each prompt is the system prompt and the current board, while the transcript keeps the whole game", async () => {
  const policy = new ScriptedPolicy({ X: ["1", "2", "3"], O: ["5", "9"] });
  const group = await doGroupRollout(new SelfPlayGroupBuilder(newTicTacToe, 1, { ...common(), historyTurns: 0 }, ["t"]), policy);
  const third = policy.prompts.filter((p) => p.mark === "X")[2].text;
  assert.match(
    third,
    /^<\|endoftext\|>System: Tic-tac-toe\. You are X[^\n]*\n\nUser: O took 9\.\n X X 3\n 4 O 6\n 7 8 O\nFree: 3 4 6 7 8\nYour move\?\n\nAssistant:$/,
  );
  const [x] = group.trajectoriesG;
  assert.equal(x.transitions[2].messages?.filter((m) => m.role === "assistant").length, 3, "the transcript still has X's three moves");
});

test("against a fixed opponent each training group plays one seat (X, O, X, …), so its games are compared like with like", async () => {
  const { ticTacToeDatasetBuilder } = await import("../../src/multiAgent/games/ticTacToeEnv.ts");
  const noModel = async () => {
    throw new Error("no base model in this test");
  };
  const { train } = await ticTacToeDatasetBuilder({
    common: common(),
    groupsPerBatch: 3,
    groupSize: 4,
    numBatches: 1,
    seed: 0,
    trainOpponent: "random",
    baseModel: noModel,
    play: { opponent: "minimax", seat: 1 },
  }).build();
  const groups = train.getBatch(0);
  const seats = await Promise.all(groups.map(async (g) => (await g.makeEnvs()).map((env) => (env instanceof SeatEnv ? env.seat : null))));
  assert.deepEqual(seats, [
    [0, 0, 0, 0],
    [1, 1, 1, 1],
    [0, 0, 0, 0],
  ]);
});
