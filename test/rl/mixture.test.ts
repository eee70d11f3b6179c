// RL dataset mixtures: groups drawn whole from one source by weight, tagged with the source's name
// so the loop logs env/<source>/… for each, the sources' test sets kept side by side; and math_rl
// trained on a mixture of its arithmetic and file sources logs the reward of both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readMetrics } from "../../src/log/metrics.ts";
import { InterleavedRLDataset, interleavedRLDatasetBuilder } from "../../src/rl/mixture.ts";
import type { RLDataset } from "../../src/rl/types.ts";
import { recipeSandbox, runRecipe } from "../recipes/helpers.ts";
import { FnGroupBuilder, ListDataset, OneTurnEnv } from "./fakes.ts";

function source(tag: string, batches: number, perBatch: number): RLDataset {
  return new ListDataset(
    Array.from({ length: batches }, (_, b) =>
      Array.from({ length: perBatch }, (_, g) => new FnGroupBuilder(() => new OneTurnEnv([b * 100 + g], () => 1), 2, [tag])),
    ),
  );
}

test("an interleaved RL dataset: each slot one source's group, tagged with the source, by weight", async () => {
  const a = source("a", 5, 2);
  const b = source("b", 40, 4);
  const mixed = new InterleavedRLDataset(
    [
      { name: "alpha", dataset: a },
      { name: "beta", dataset: b },
    ],
    [0.25, 0.75],
    8,
    20,
    1,
  );
  assert.equal(mixed.length, 20);
  const tags = Array.from({ length: 20 }, (_, i) => mixed.getBatch(i).map((g) => g.loggingTags())).flat();
  assert.equal(tags.length, 160);
  const alpha = tags.filter((t) => t.includes("alpha"));
  assert.ok(
    alpha.every((t) => t.includes("a") && !t.includes("beta")),
    "a group keeps its own tags and gets its source's",
  );
  assert.ok(alpha.length > 25 && alpha.length < 55, `alpha share ${alpha.length}/160`);
  assert.deepEqual(mixed.scheduledGroups(), { alpha: alpha.length, beta: 160 - alpha.length });
  // The groups are the sources' own: their envs carry the source batch's prompts.
  const envs = await mixed.getBatch(0)[0]!.makeEnvs();
  assert.equal(envs.length, 2);

  const built = await interleavedRLDatasetBuilder(
    [
      { name: "alpha", weight: 1, builder: { build: async () => ({ train: a, test: source("a", 1, 3) }) } },
      { name: "beta", weight: 3, builder: { build: async () => ({ train: b, test: source("b", 2, 1) }) } },
    ],
    { groupsPerBatch: 4, totalBatches: null, seed: 0 },
  ).build();
  assert.ok(built.test);
  assert.equal(built.test.length, 3);
  assert.deepEqual(
    built.test.getBatch(0).map((g) => g.loggingTags()),
    [
      ["a", "alpha"],
      ["a", "alpha"],
      ["a", "alpha"],
    ],
  );
  assert.deepEqual(built.test.getBatch(2)[0]!.loggingTags(), ["b", "beta"]);
  assert.throws(
    () =>
      interleavedRLDatasetBuilder(
        [
          { name: "x", weight: 1, builder: { build: async () => ({ train: a }) } },
          { name: "x", weight: 1, builder: { build: async () => ({ train: b }) } },
        ],
        { groupsPerBatch: 2, totalBatches: 1, seed: 0 },
      ),
    /names must differ/,
  );
});

test("math_rl on a mixture of arithmetic and file problems logs the reward of each source", { timeout: 120_000 }, async () => {
  const s = recipeSandbox("rl-mixture");
  try {
    const logDir = join(s.root, "mix");
    await runRecipe("math_rl", [
      `model_name=${s.modelDir}`,
      `log_path=${logDir}`,
      "group_size=2",
      "groups_per_batch=8",
      "max_tokens=4",
      "lora_rank=4",
      "max_steps=3",
      "test_problems=2",
      "eval_every=3",
      'mixture=[{"env":"arithmetic","weight":1},{"env":"file","weight":1}]',
      "behavior_if_log_dir_exists=delete",
    ]);
    const rows = readMetrics(logDir).filter((r) => "progress/batch" in r);
    assert.equal(rows.length, 3);
    for (const row of rows) {
      // With 8 groups at weight 1:1, a batch without one of the sources has odds 2/256.
      const present = ["arithmetic", "file"].filter((src) => `env/${src}/reward/total` in row);
      assert.ok(present.length >= 1);
    }
    const seen = new Set(rows.flatMap((r) => ["arithmetic", "file"].filter((src) => `env/${src}/reward/total` in r)));
    assert.deepEqual([...seen].sort(), ["arithmetic", "file"]);
    const evalRow = readMetrics(logDir).find((r) => Object.keys(r).some((k) => k.startsWith("test/env/file/")));
    assert.ok(evalRow, "the test sets are evaluated per source");
  } finally {
    s.cleanup();
  }
});
