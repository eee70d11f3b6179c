// The comparison renderer (markers, one trained label token), the preference models' verdicts,
// tournaments and their rewards, win rates judged both ways round, and the synthetic sets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ComparisonRendererFromChatRenderer } from "../../src/preference/comparisonRenderer.ts";
import { PreferenceModelFromChatRenderer, ShorterPreferenceModel, type PreferenceModel } from "../../src/preference/preferenceModel.ts";
import { getPairs, getPairsChunked, PairwisePreferenceGroupBuilder, PairwisePreferenceRLDataset } from "../../src/preference/pairwiseEnv.ts";
import { computeWinRate } from "../../src/preference/winRate.ts";
import { generateComparisons } from "../../src/preference/synthetic.ts";
import { chosenAndRejected, type Comparison } from "../../src/preference/types.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import type { ModelInput, SampleResponse } from "../../src/tinker/types.ts";
import type { Trajectory } from "../../src/rl/types.ts";
import { getTextContent } from "../../src/renderers/content.ts";

const tokenizer = await getTokenizer("tiny-chat");
const renderer = getRenderer("role_colon", tokenizer);
const tokensOf = (mi: ModelInput) => mi.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));

const cmp: Comparison = {
  promptConversation: [{ role: "user", content: "Who are you?" }],
  completionA: [{ role: "assistant", content: "I am Tiny." }],
  completionB: [{ role: "assistant", content: "Well, I am Tiny, a small assistant. I hope this helps!" }],
};

test("comparison renderer: prompt, both completions behind markers, trained on the label token alone", () => {
  const cr = new ComparisonRendererFromChatRenderer(renderer);
  const prompt = cr.buildGenerationPrompt(cmp);
  assert.equal(
    tokenizer.decode(tokensOf(prompt)),
    "<|endoftext|>User: Who are you?\n\nSystem: ==== Completion A ====\n\nAssistant: I am Tiny.\n\nSystem: ==== Completion B ====\n\nAssistant: Well, I am Tiny, a small assistant. I hope this helps!\n\nSystem: ==== Preference ====\n\nAssistant:",
  );
  for (const label of ["A", "B"] as const) {
    const { modelInput, weights } = cr.toModelInputWeights({ comparison: cmp, label });
    const tokens = tokensOf(modelInput);
    assert.deepEqual(tokens.slice(0, -1), tokensOf(prompt), "training example = generation prompt + label token");
    assert.equal(tokenizer.decode(tokens.slice(-1)).trim(), label);
    assert.deepEqual([...weights], [...new Array(tokens.length - 1).fill(0), 1]);
  }
});

/** A sampler that answers every prompt with the same text (as tokens) and records what it saw. */
function fixedSampler(text: string): SamplingClient & { prompts: ModelInput[]; params: unknown[] } {
  const prompts: ModelInput[] = [];
  const params: unknown[] = [];
  return {
    baseModel: "tiny-chat",
    prompts,
    params,
    async sample(prompt, n, p): Promise<SampleResponse> {
      prompts.push(prompt);
      params.push(p);
      return { sequences: Array.from({ length: n }, () => ({ stop_reason: "stop" as const, tokens: tokenizer.encode(text, { addSpecialTokens: false }) })) };
    },
    async computeLogprobs() {
      return [];
    },
  };
}

test("learned preference model: one greedy token; A → −1, B → +1, anything else → 0 (counted)", async () => {
  for (const [verdict, score] of [
    [" A", -1],
    [" B", 1],
    [" Tie", 0],
    [" maybe", 0],
  ] as const) {
    const sampler = fixedSampler(verdict);
    const pm = new PreferenceModelFromChatRenderer(renderer, tokenizer, sampler);
    assert.equal(await pm.score(cmp), score);
    assert.deepEqual(sampler.params[0], { temperature: 0, max_tokens: 1 });
    assert.equal(pm.invalidVerdicts, verdict === " maybe" ? 1 : 0);
  }
  const shorter = new ShorterPreferenceModel();
  assert.equal(await shorter.score(cmp), -1);
  assert.equal(await shorter.score({ ...cmp, completionA: cmp.completionB, completionB: cmp.completionA }), 1);
  assert.equal(await shorter.score({ ...cmp, completionB: cmp.completionA }), 0);
});

test("tournament pairs: both ways = n(n−1) ordered pairs, one way = n(n−1)/2, chunks stay inside", () => {
  assert.deepEqual(getPairs(3, "all_pairs_one_way"), [
    [0, 1],
    [0, 2],
    [1, 2],
  ]);
  assert.deepEqual(getPairs(3, "all_pairs_both_ways"), [
    [0, 1],
    [0, 2],
    [1, 0],
    [1, 2],
    [2, 0],
    [2, 1],
  ]);
  assert.deepEqual(getPairsChunked(6, "all_pairs_one_way", 3), [
    [0, 1],
    [0, 2],
    [1, 2],
    [3, 4],
    [3, 5],
    [4, 5],
  ]);
  assert.equal(getPairsChunked(8, "all_pairs_both_ways", 4).length, 24);
  assert.throws(() => getPairsChunked(4, "all_pairs_one_way", 1), /matchup_group_size/);
});

function trajectory(text: string): Trajectory {
  const tokens = tokenizer.encode(text, { addSpecialTokens: false });
  return {
    transitions: [
      { ob: { chunks: [] }, ac: { tokens, logprobs: tokens.map(() => 0), stopReason: "stop" }, reward: 0, episodeDone: true, metrics: {}, logs: {} },
    ],
    finalOb: { chunks: [] },
    stopReason: "completed",
  };
}

test("group rewards = (wins − losses)/matchups + format term, by hand", async () => {
  const group = new PairwisePreferenceGroupBuilder(cmp.promptConversation, renderer, new ShorterPreferenceModel(), 3, {
    pattern: "all_pairs_one_way",
    formatCoef: 1,
  });
  const envs = await group.makeEnvs();
  assert.equal(envs.length, 3);
  // Replies of 3, 9 and 5 characters; the last one never emitted the stop sequence.
  const rewards = await group.computeGroupRewards([trajectory(" Hi!\n\nUser:"), trajectory(" Hello you\n\nUser:"), trajectory(" Hey x")], envs);
  // One way: (0,1) shorter 0 wins, (0,2) 0 wins, (1,2) 2 wins. 0: +2/2, 1: −2/2, 2: (−1 + 1)/2 = 0.
  assert.deepEqual(
    rewards.map((r) => r.metrics["win_minus_loss"]),
    [1, -1, 0],
  );
  assert.deepEqual(
    rewards.map((r) => r.metrics["format"]),
    [1, 1, 0],
  );
  assert.deepEqual(
    rewards.map((r) => r.reward),
    [1, -1, -1],
  );
  assert.deepEqual(group.lastTournament!.scores, [-1, -1, 1]);
  // Each reply's results for the transcripts: net wins against each opponent, and matchups played.
  assert.deepEqual(
    rewards.map((r) => r.logs),
    [
      { matchups: 2, vs_1: 1, vs_2: 1 },
      { matchups: 2, vs_0: -1, vs_2: -1 },
      { matchups: 2, vs_0: -1, vs_1: 1 },
    ],
  );
  const both = new PairwisePreferenceGroupBuilder(cmp.promptConversation, renderer, new ShorterPreferenceModel(), 2);
  const r2 = await both.computeGroupRewards([trajectory(" Hi!\n\nUser:"), trajectory(" Hello you\n\nUser:")], await both.makeEnvs());
  assert.deepEqual(
    r2.map((r) => r.reward),
    [1, -1],
    "both ways: two matchups each, both won by the shorter",
  );
  assert.deepEqual(
    r2.map((r) => r.logs),
    [
      { matchups: 2, vs_1: 2 },
      { matchups: 2, vs_0: -2 },
    ],
    "both ways: the two wins against the same opponent add up",
  );
  const ds = new PairwisePreferenceRLDataset(
    [cmp.promptConversation, [{ role: "user", content: "Hi" }]],
    3,
    (p) => new PairwisePreferenceGroupBuilder(p, renderer, new ShorterPreferenceModel(), 4),
    2,
  );
  assert.equal(ds.length, 2);
  assert.equal(ds.getBatch(1).length, 3);
});

test("win rate judges each pair both ways round: a judge that always says A scores exactly 0.5", async () => {
  const alwaysA: PreferenceModel = { score: async () => -1 };
  const prompts = [cmp.promptConversation, [{ role: "user", content: "Hi" }]];
  const short = fixedSampler(" Hi.\n\nUser:");
  const long = fixedSampler(" Hello there, friend.\n\nUser:");
  const biased = await computeWinRate(short, long, prompts, renderer, alwaysA, { maxTokens: 8 });
  assert.equal(biased.winRate, 0.5);
  const fair = await computeWinRate(short, long, prompts, renderer, new ShorterPreferenceModel(), { maxTokens: 8 });
  assert.deepEqual([fair.winRate, fair.wins, fair.losses], [1, 4, 0]);
  const same = await computeWinRate(short, short, prompts, renderer, new ShorterPreferenceModel(), { maxTokens: 8 });
  assert.equal(same.winRate, 0.5);
});

test("synthetic sets: deterministic, A/B balanced, the preferred side shows the set's trait", () => {
  for (const set of ["pirate", "concise", "arithmetic"] as const) {
    const a = generateComparisons(new Prng(5), set, 400, "train");
    assert.deepEqual(a, generateComparisons(new Prng(5), set, 400, "train"));
    const share = a.filter((c) => c.label === "A").length / a.length;
    assert.ok(share > 0.4 && share < 0.6, `${set}: label A share ${share}`);
    for (const lc of a) {
      const { chosen, rejected } = chosenAndRejected(lc)!;
      const c = getTextContent(chosen[0]!);
      const r = getTextContent(rejected[0]!);
      if (set === "pirate") assert.ok(/Arr|Ahoy/.test(c) && !/Arr|Ahoy/.test(r), `${c} | ${r}`);
      if (set === "concise") assert.ok(r.length > c.length && r.includes(c), `${c} | ${r}`);
      if (set === "arithmetic") {
        const q = String(lc.comparison.promptConversation.at(-1)!.content).match(/(\d+) \+ (\d+)/)!;
        assert.equal(Number(c), Number(q[1]) + Number(q[2]));
        assert.notEqual(Number(r), Number(c));
      }
    }
  }
});
