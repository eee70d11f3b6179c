// Rubric RL (the cookbook's recipes/rubric): the policy answers a conversation, a grader model
// scores the reply against each rubric item, and the reward is the sum of the scores. Data is the
// cookbook's JSONL format ({"convo": [...], "rubric_items": [{"rubric_str", "extraction_regex"?,
// "grader_output_format_instruction"?}]}); the default is its addition demo, made by
// scripts/makeRubricData.ts. The grader is any model: a name or local folder (`grader_model`), a
// sampler checkpoint (`grader_checkpoint`, tinker://…), on this run's server or another
// (`grader_base_url`, "local" for the embedded engine). The shipped tiny models cannot read a rubric,
// so by default a supervised warm-up first teaches the grader model to grade the demo's rubric
// (the cookbook's note: "we may need to fine-tune the grader LLM as well"); its verdicts are in
// every transcript. See docs/rl.md "Rubric" for the measured run and what it shows.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { additionReply } from "../../src/data/synthetic/rubricAddition.ts";
import { createTeacher } from "../../src/distillation/teacher.ts";
import { LLMJudge } from "../../src/eval/judge.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { RubricDataset, type RubricGrader, graderPrompt, readRubricJsonl } from "../../src/rl/envs/rubric.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { supervisedWarmup, warmupRunFields } from "../../src/supervised/warmup.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { overrideDefaults } from "../../src/training/config.ts";
import { type SamplerSource, samplersBeforeRun } from "../../src/training/reconnectingSampler.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    train_path: z.string().default(fixtureDataPath("rubric_addition_train.jsonl")).describe("Rubric datapoints: the cookbook's JSONL of {convo, rubric_items}"),
    test_path: z.string().nullable().default(fixtureDataPath("rubric_addition_test.jsonl")).describe("Held-out datapoints (null = none)"),
    test_problems: z.number().int().min(0).default(32).describe("Held-out datapoints per evaluation (0 = no test set)"),
    grader_model: z.string().default("tiny-chat").describe("Grader: a model name or local Hugging Face folder"),
    grader_checkpoint: z
      .string()
      .nullable()
      .default(null)
      .describe("Grader sampler weights (tinker://…/sampler_weights/…); null: the grader warm-up's, or the base model's"),
    grader_base_url: z
      .string()
      .nullable()
      .default(null)
      .describe('Server of the grader when it is not this run\'s (an http(s) URL, or "local" for the embedded engine)'),
    grader_renderer_name: z.string().nullable().default(null).describe("Grader chat format (null = the grader model's own)"),
    grader_max_tokens: z.number().int().positive().default(16).describe("Tokens the grader may write per rubric item"),
    grader_warmup_steps: z
      .number()
      .int()
      .min(0)
      .default(60)
      .describe("Supervised steps teaching the grader model the addition demo's rubric before RL (0 = use the grader as it is; only for the demo data)"),
    grader_warmup_batch_size: z.number().int().positive().default(16).describe("Grader warm-up examples per step"),
    grader_warmup_learning_rate: z.number().positive().default(5e-3).describe("Grader warm-up peak learning rate (linear decay)"),
    grader_lora_rank: z.number().int().positive().default(32).describe("LoRA rank of the grader warm-up"),
  }),
  {
    log_path: "/tmp/tinker-examples/rubric",
    learning_rate: 3e-3,
    max_tokens: 8,
    lora_rank: 8,
    max_steps: 20,
    eval_every: 10,
    save_every: 10,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type RubricConfig = z.output<typeof configSchema>;

/**
 * The grader warm-up's transcripts: grader prompts for demo datapoints answered right (half) or
 * a near miss, and the score a careful grader writes. Only the demo's rubric is taught.
 */
function graderTranscripts(config: RubricConfig) {
  return (_renderer: unknown, count: number) => {
    const rng = new Prng(config.seed * 31 + 5);
    const data = readRubricJsonl(config.train_path);
    return Array.from({ length: count }, () => {
      const datapoint = data[rng.int(0, data.length - 1)]!;
      const sum = /What is (\d+) \+ (\d+)\?/.exec(datapoint.convo[datapoint.convo.length - 1]!.content);
      if (sum === null) throw new Error(`grader warm-up: ${config.train_path} is not the addition demo (set grader_warmup_steps=0 and choose a grader)`);
      const { reply, right } = additionReply(rng, Number(sum[1]), Number(sum[2]), 0.5);
      const prompt = graderPrompt([...datapoint.convo, { role: "assistant", content: reply }], datapoint.rubric_items[0]!);
      return [
        { role: "user", content: prompt },
        { role: "assistant", content: `<score>${right ? 1 : 0}</score>` },
      ];
    });
  };
}

/** The grader's sampler weights: the configured checkpoint, else a (reused) warm-up's, else none. */
async function graderCheckpoint(config: RubricConfig, context?: RecipeContext): Promise<string | null> {
  if (config.grader_checkpoint !== null || config.grader_warmup_steps === 0) return config.grader_checkpoint;
  const done = await supervisedWarmup(
    {
      ...warmupRunFields({
        ...config,
        log_path: `${config.log_path}-grader`,
        model_name: config.grader_model,
        renderer_name: config.grader_renderer_name,
        lora_rank: config.grader_lora_rank,
      }),
      base_url: config.grader_base_url ?? config.base_url,
      steps: config.grader_warmup_steps,
      batch_size: config.grader_warmup_batch_size,
      learning_rate: config.grader_warmup_learning_rate,
      data: `rubric grader transcripts from ${config.train_path}`,
    },
    graderTranscripts(config),
    context,
  );
  if (done.samplerPath === null) throw new Error("rubric: the grader warm-up saved no sampler weights");
  return done.samplerPath;
}

/** An LLMJudge over the grader model, on `service` unless grader_base_url names another server. */
async function makeGrader(
  config: RubricConfig,
  source: SamplerSource,
  checkpoint: string | null,
): Promise<{ grader: RubricGrader; close: () => Promise<void> }> {
  const client = await createTeacher(source, { base_model: config.grader_model, load_checkpoint_path: checkpoint, base_url: config.grader_base_url });
  const renderer = getRenderer(resolveRendererName(config.grader_model, config.grader_renderer_name), await getTokenizer(config.grader_model));
  return {
    grader: new LLMJudge({ samplingClient: client.client, renderer, maxTokens: config.grader_max_tokens, temperature: 0 }),
    close: () => client.close(),
  };
}

function datasetBuilder(config: RubricConfig, setup: RLRecipeSetup, grader: () => Promise<RubricGrader>): RLDatasetBuilder {
  return {
    async build() {
      const judge = await grader();
      const train = new RubricDataset(readRubricJsonl(config.train_path), setup.renderer, judge, config.groups_per_batch, config.group_size);
      if (train.length === 0) throw new Error(`rubric: fewer datapoints in ${config.train_path} than groups_per_batch=${config.groups_per_batch}`);
      const testPath = config.test_path;
      const held = testPath === null || config.test_problems === 0 ? [] : readRubricJsonl(testPath).slice(0, config.test_problems);
      return { train, test: held.length === 0 ? null : new RubricDataset(held, setup.renderer, judge, held.length, 1) };
    },
  };
}

/**
 * The environments the loop trains in; `cookbook play rubric` puts a person in them, graded by the
 * configured grader (grader_checkpoint, or the base grader model when none is given).
 */
export function environments(config: RubricConfig, setup: RLRecipeSetup): RLDatasetBuilder {
  return datasetBuilder(config, setup, async () => {
    // Playing by hand: the grader lives as long as the process.
    const samplers = await samplersBeforeRun(config);
    return (await makeGrader(config, samplers.source, config.grader_checkpoint)).grader;
  });
}

async function main(config: RubricConfig, context?: RecipeContext): Promise<void> {
  const checkpoint = await graderCheckpoint(config, context);
  // On a remote server the loop owns its connection (so it resumes after the server goes away) and
  // the grader its own, reconnecting one; embedded, both share one engine.
  const samplers = await samplersBeforeRun(config);
  const closers: (() => Promise<void>)[] = [];
  try {
    await runRLRecipe(
      config,
      (setup) =>
        datasetBuilder(config, setup, async () => {
          const made = await makeGrader(config, samplers.source, checkpoint);
          closers.push(made.close);
          return made.grader;
        }),
      context,
      { ...(samplers.loopService !== undefined ? { serviceClient: samplers.loopService } : {}), onEnter: samplers.onEnter },
    );
  } finally {
    for (const close of closers) await close();
    await samplers.close();
  }
}

export default defineRecipe({
  name: "rubric",
  description:
    "Rubric RL: a grader model scores each reply against rubric items (any model, checkpoint or server; default the cookbook's addition demo with a grader warmed up to grade it), verdicts in the transcripts",
  configSchema,
  main,
});
