// Experiment files: the three forms (TypeScript module, JSON, YAML) read into the same validated
// experiment; errors name the file, the line (JSON/YAML) and the key; the grid expands into
// deterministic readable names; every run's overrides are checked against its recipe's schema
// before anything trains, with errors naming the run and the key.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { recipes } from "../../recipes/registry.ts";
import { changedOverrides } from "../../src/experiments/batch.ts";
import { expandRuns, valueSlug } from "../../src/experiments/expand.ts";
import { loadExperimentFile, validateExperiment } from "../../src/experiments/load.ts";
import { argText, planExperiment } from "../../src/experiments/plan.ts";
import { ExperimentSchema, defineExperiment, type ExperimentInput } from "../../src/experiments/schema.ts";
import * as pkg from "../../src/index.ts";

const REPO = resolve(import.meta.dirname, "../..");

function withDir(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "experiment-file-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const GRID: ExperimentInput = {
  name: "demo",
  defaults: { max_steps: 5, learning_rate: 0.01 },
  grid: {
    recipe: "sl_basic",
    models: ["tiny-chat", "tiny-chat-teacher"],
    datasets: ["./persona_train.jsonl", { name: "sums", overrides: { dataset: "./sums.jsonl", learning_rate: 0.003 } }],
    values: { lora_rank: [4, 8] },
  },
  test_sets: ["arithmetic", { benchmark: "nll:./held_out.jsonl", max_examples: 3 }],
};

test("defineExperiment is exported from the package index and gives back the object", () => {
  assert.equal(pkg.defineExperiment, defineExperiment);
  assert.equal(defineExperiment(GRID), GRID);
});

test(
  "the TypeScript, JSON and YAML forms load into the same experiment",
  withDir(async (dir) => {
    const ts = join(dir, "demo.ts");
    writeFileSync(
      ts,
      `import { defineExperiment } from ${JSON.stringify(join(REPO, "src", "experiments", "schema.ts"))};\nexport default defineExperiment(${JSON.stringify(GRID)});\n`,
    );
    const json = join(dir, "demo.json");
    writeFileSync(json, JSON.stringify(GRID, null, 2));
    const yaml = join(dir, "demo.yaml");
    writeFileSync(
      yaml,
      [
        "name: demo",
        "defaults: { max_steps: 5, learning_rate: 0.01 }",
        "grid:",
        "  recipe: sl_basic",
        "  models: [tiny-chat, tiny-chat-teacher]",
        "  datasets:",
        "    - ./persona_train.jsonl",
        "    - name: sums",
        "      overrides: { dataset: ./sums.jsonl, learning_rate: 0.003 }",
        "  values:",
        "    lora_rank: [4, 8]",
        "test_sets:",
        "  - arithmetic",
        "  - benchmark: nll:./held_out.jsonl",
        "    max_examples: 3",
      ].join("\n"),
    );
    const expected = ExperimentSchema.parse(GRID);
    for (const file of [ts, json, yaml]) {
      const loaded = await loadExperimentFile(file);
      assert.equal(loaded.file, file);
      assert.deepEqual(loaded.experiment, expected, file);
    }
  }),
);

test(
  "errors name the file, the line and the key",
  withDir(async (dir) => {
    const yaml = join(dir, "bad.yaml");
    writeFileSync(yaml, ["name: demo", "runs:", "  - recipe: sl_basic", "  - recipe: 7", "test_sets: [arithmetic]"].join("\n"));
    await assert.rejects(loadExperimentFile(yaml), (err: Error) => err.message.startsWith(`${yaml}:4: runs[1].recipe: `) && /string/.test(err.message));

    const json = join(dir, "bad.json");
    writeFileSync(json, JSON.stringify({ name: "demo", runs: [{ recipe: "sl_basic", overides: {} }] }, null, 2));
    await assert.rejects(loadExperimentFile(json), (err: Error) => err.message === `${json}:6: runs[0]: unknown key "overides"`);

    writeFileSync(json, '{"name": "demo", "runs": [');
    await assert.rejects(loadExperimentFile(json), (err: Error) => err.message.startsWith(`${json}: not valid JSON`));

    const nameless = join(dir, "nameless.yaml");
    writeFileSync(nameless, "name: has space\nruns: [{recipe: sl_basic}]\n");
    await assert.rejects(loadExperimentFile(nameless), /nameless\.yaml:1: name: the experiment name must start with a letter or digit/);

    const empty = join(dir, "empty.json");
    writeFileSync(empty, JSON.stringify({ name: "demo" }));
    await assert.rejects(loadExperimentFile(empty), /empty\.json:1: runs: an experiment needs runs, a grid, or both/);

    const mod = join(dir, "noexport.ts");
    writeFileSync(mod, "export const other = 1;\n");
    await assert.rejects(loadExperimentFile(mod), /noexport\.ts: export the experiment as default/);

    await assert.rejects(loadExperimentFile(join(dir, "missing.yaml")), /missing\.yaml: no such experiment file/);
    writeFileSync(join(dir, "x.toml"), "");
    await assert.rejects(loadExperimentFile(join(dir, "x.toml")), /x\.toml: expected a \.ts\/\.js module, a \.json or a \.yaml/);
    // A union (a test set is a spec or an object): the error of the object form, with its key.
    assert.throws(
      () => validateExperiment({ name: "demo", runs: [{ recipe: "sl_basic" }], test_sets: [{ benchmark: "arithmetic", temprature: 1 }] }, "mem.ts"),
      (e: Error) => e.message.startsWith("mem.ts: test_sets[0]: ") && e.message.includes('unknown key "temprature"'),
    );
  }),
);

test("the grid expands to every model × dataset × value, named readably and in a fixed order", () => {
  const file = "/exp/demo.ts";
  const drafts = expandRuns(ExperimentSchema.parse({ ...GRID, runs: [{ recipe: "dpo" }, { name: "mine", recipe: "sl_basic", overrides: { seed: 3 } }] }), file);
  assert.deepEqual(
    drafts.map((d) => d.name),
    [
      "dpo_1",
      "mine",
      "tiny-chat__persona_train__lora_rank-4",
      "tiny-chat__persona_train__lora_rank-8",
      "tiny-chat__sums__lora_rank-4",
      "tiny-chat__sums__lora_rank-8",
      "tiny-chat-teacher__persona_train__lora_rank-4",
      "tiny-chat-teacher__persona_train__lora_rank-8",
      "tiny-chat-teacher__sums__lora_rank-4",
      "tiny-chat-teacher__sums__lora_rank-8",
    ],
  );
  const sums8 = drafts.find((d) => d.name === "tiny-chat-teacher__sums__lora_rank-8")!;
  // Later layers win: defaults, grid overrides, model, dataset, values; ./ paths from the file's folder.
  assert.deepEqual(Object.assign({}, ...sums8.layers), {
    max_steps: 5,
    learning_rate: 0.003,
    model_name: "tiny-chat-teacher",
    dataset: "/exp/sums.jsonl",
    lora_rank: 8,
  });
  assert.deepEqual(Object.assign({}, ...drafts[2]!.layers).dataset, "/exp/persona_train.jsonl");
  assert.equal(valueSlug(1e-4), "0.0001");
  assert.equal(valueSlug("Qwen/Qwen3-0.6B"), "Qwen3-0");
  assert.equal(valueSlug({ a: 1 }), "a_1_");
  assert.throws(
    () =>
      expandRuns(
        ExperimentSchema.parse({
          name: "d",
          runs: [
            { name: "x", recipe: "sl_basic" },
            { name: "x", recipe: "dpo" },
          ],
        }),
        file,
      ),
    /two runs are named "x" \(runs\[0\] and runs\[1\]\)/,
  );
});

test(
  "overrides are checked against each recipe's schema before anything trains",
  withDir(async (dir) => {
    const file = join(dir, "demo.ts");
    writeFileSync(
      join(dir, "held_out.jsonl"),
      `${JSON.stringify({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      })}\n`,
    );
    const plan = await planExperiment(ExperimentSchema.parse({ ...GRID, baselines: true }), file, recipes);
    assert.equal(plan.runs.length, 8);
    const run = plan.runs[0]!;
    assert.deepEqual(run.args, ["max_steps=5", "learning_rate=0.01", "model_name=tiny-chat", `dataset=${join(dir, "persona_train.jsonl")}`, "lora_rank=4"]);
    assert.equal(run.config["lora_rank"], 4);
    assert.equal(run.config["batch_size"], 16, "the recipe's own defaults fill the rest");
    assert.deepEqual(plan.baselines, ["tiny-chat", "tiny-chat-teacher"]);
    assert.deepEqual(
      plan.testSets.map((t) => [t.name, t.kind, t.metric, t.higher_is_better, t.settings]),
      [
        ["arithmetic", "accuracy", "accuracy", true, {}],
        ["nll_held_out", "nll", "nll", false, { max_examples: 3 }],
      ],
    );
    assert.equal(plan.evalBaseUrl, null);
    // A finished run whose recorded config no longer matches the experiment is named (it is not retrained).
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ...run.config, learning_rate: 0.02, batch_size: 3 }));
    assert.deepEqual(changedOverrides(dir, run), ["learning_rate=0.02"], "batch_size is not an override of this run");
    writeFileSync(join(dir, "config.json"), JSON.stringify(run.config));
    assert.deepEqual(changedOverrides(dir, run), []);

    const bad = (overrides: Record<string, unknown>, extra: Partial<ExperimentInput> = {}) =>
      planExperiment(
        ExperimentSchema.parse({
          name: "d",
          runs: [
            { name: "r1", recipe: "sl_basic" },
            { name: "r2", recipe: "sl_basic", overrides },
          ],
          ...extra,
        }),
        file,
        recipes,
      );
    await assert.rejects(bad({ learning_rate: "fast" }), (e: Error) =>
      e.message.includes('run "r2" (runs[1], recipe sl_basic): invalid value for learning_rate: "fast" (expected a number)'),
    );
    await assert.rejects(bad({ learning_rat: 0.1 }), (e: Error) =>
      e.message.includes('run "r2" (runs[1], recipe sl_basic): unknown config key "learning_rat"; closest valid keys: learning_rate'),
    );
    await assert.rejects(bad({ log_path: "/x" }), /run "r2" \(runs\[1\]\): log_path is set by cookbook batch/);
    await assert.rejects(
      planExperiment(ExperimentSchema.parse({ name: "d", runs: [{ recipe: "sl_basc" }] }), file, recipes),
      /run "sl_basc_1" \(runs\[0\]\): unknown recipe "sl_basc"; closest: sl_basic/,
    );
    await assert.rejects(bad({}, { test_sets: ["nll:./nothing.jsonl"] }), /test_sets\[0\]: nll:\.\/nothing\.jsonl: no such file/);
    await assert.rejects(bad({}, { test_sets: ["gsm9k"] }), /test_sets\[0\]: unknown benchmark "gsm9k"/);
    await assert.rejects(
      bad({}, { test_sets: ["nll:./held_out.jsonl", `nll:${dir}/held_out.jsonl`] }),
      /test_sets\[1\]: nll:\S+held_out\.jsonl has the same name \(nll_held_out\) as nll:/,
    );
    await assert.rejects(bad({ base_url: "http://a:1" }), /different services/);
    // Nested objects and dotted keys both reach nested fields.
    const rl = await planExperiment(
      ExperimentSchema.parse({
        name: "d",
        runs: [
          { recipe: "rl_basic", overrides: { async_config: { max_steps_off_policy: 2 } } },
          { recipe: "rl_basic", overrides: { "async_config.groups_per_batch": 3 } },
        ],
        baselines: ["x"],
      }),
      file,
      recipes,
    );
    assert.deepEqual(
      rl.runs.map((r) => r.args),
      [["async_config.max_steps_off_policy=2"], ["async_config.groups_per_batch=3"]],
    );
    assert.deepEqual(rl.baselines, ["x"]);
    assert.deepEqual([argText(Infinity), argText(null), argText([1, 2]), argText(false)], ["inf", "null", "[1,2]", "false"]);
  }),
);

test("the shipped example experiment plans: 2 models × 2 datasets, baselines, three test sets", async () => {
  const { file, experiment } = await loadExperimentFile(join(REPO, "experiments", "example.ts"));
  const plan = await planExperiment(experiment, file, recipes);
  assert.deepEqual(
    plan.runs.map((r) => r.name),
    ["tiny-chat__persona", "tiny-chat__arithmetic", "tiny-chat-teacher__persona", "tiny-chat-teacher__arithmetic"],
  );
  assert.deepEqual(plan.baselines, ["tiny-chat", "tiny-chat-teacher"]);
  assert.deepEqual(
    plan.testSets.map((t) => t.name),
    ["nll_persona_test", "nll_arithmetic_chats_test", "arithmetic_max100"],
  );
  assert.equal(plan.runs[1]!.config["dataset"], join(REPO, "fixtures", "data", "arithmetic_chats_train.jsonl"));
});
