// The three-stage RLHF pipeline (spec §6, the cookbook's rlhf_pipeline), offline by default:
//   1. sft               supervised fine-tuning on the comparison prompts answered by either side
//   2. preference_model  a LoRA trained to answer "A" or "B" after a rendered comparison
//   3. rl                pairwise-preference RL from the SFT weights, rewarded by tournaments the
//                        preference model judges; test/win_rate against the SFT policy
// Each stage is its own run folder under log_path; finished stages are skipped on a rerun and an
// interrupted stage resumes from its last checkpoint.
import { join } from "node:path";
import { z } from "zod";
import { LogDirBehaviorSchema } from "../config/common.ts";
import type { RecipeContext } from "../config/recipe.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { getRenderer } from "../renderers/registry.ts";
import { main as rlMain } from "../rl/train.ts";
import { createServiceClient } from "../service.ts";
import { main as supervisedMain } from "../supervised/train.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import { comparisonSourceFields, loadComparisons, type ComparisonSplits } from "./datasets.ts";
import { PairwisePreferenceGroupBuilder, PairwisePreferenceRLDataset, TOURNAMENT_PATTERNS } from "./pairwiseEnv.ts";
import { preferenceModelDatasetBuilder } from "./preferenceData.ts";
import { PreferenceAccuracyEvaluator } from "./preferenceEval.ts";
import { PreferenceModelFromChatRenderer } from "./preferenceModel.ts";
import { sftMixDatasetBuilder, uniquePrompts } from "./sftMix.ts";
import { runStage } from "./stages.ts";
import { WinRateEvaluator } from "./winRate.ts";

export const rlhfConfigSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/rlhf").describe("Parent folder: sft/, preference_model/ and rl/ runs go inside"),
  model_name: z.string().default("tiny-chat").describe("Base model of all three stages"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one)"),
  ...comparisonSourceFields,
  dataset: comparisonSourceFields.dataset.default("concise"),
  lora_rank: z.number().int().positive().default(16).describe("LoRA rank of every stage"),
  seed: z.number().int().default(0).describe("Seed of adapters, data order and sampling"),
  max_length: z.number().int().positive().nullable().default(512).describe("Truncate SFT examples to this many tokens"),
  sft_learning_rate: z.number().positive().default(2e-3).describe("Stage 1 learning rate"),
  sft_batch_size: z.number().int().positive().default(16).describe("Stage 1 conversations per step"),
  sft_steps: z.number().int().positive().default(60).describe("Stage 1 steps"),
  sft_rejected_fraction: z.number().min(0).max(1).default(0.75).describe("Stage 1: share of prompts answered by the dispreferred completion (how much the SFT policy has to unlearn)"),
  pm_learning_rate: z.number().positive().default(1e-3).describe("Stage 2 learning rate"),
  pm_batch_size: z.number().int().positive().default(16).describe("Stage 2 comparisons per step"),
  pm_steps: z.number().int().positive().default(50).describe("Stage 2 steps"),
  rl_learning_rate: z.number().positive().default(2e-3).describe("Stage 3 learning rate (constant)"),
  rl_steps: z.number().int().positive().default(20).describe("Stage 3 iterations"),
  group_size: z.number().int().min(2).default(4).describe("Stage 3 replies per prompt (one tournament)"),
  groups_per_batch: z.number().int().positive().default(8).describe("Stage 3 prompts per iteration"),
  max_tokens: z.number().int().positive().default(40).describe("Stage 3 maximum reply tokens"),
  tournament_pattern: z.enum(TOURNAMENT_PATTERNS).default("all_pairs_both_ways").describe("Which matchups each group plays"),
  win_rate_prompts: z.number().int().min(0).default(32).describe("Held-out prompts for test/win_rate (0 = no win-rate eval)"),
  eval_every: z.number().int().min(0).default(5).describe("Evaluate every N steps in each stage"),
  save_every: z.number().int().min(0).default(10).describe("Checkpoint every N steps in each stage"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("resume").describe("resume: skip finished stages and resume the interrupted one; delete: start over"),
});
export type RlhfConfig = z.output<typeof rlhfConfigSchema>;

export interface RlhfResult {
  stagesRun: string[];
  sftSamplerPath: string;
  pmSamplerPath: string;
  rlSamplerPath: string;
}

export async function runRlhfPipeline(config: RlhfConfig, context?: RecipeContext, log: (line: string) => void = (l) => console.log(l)): Promise<RlhfResult> {
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const tokenizer = await getTokenizer(config.model_name);
  const renderer = getRenderer(rendererName, tokenizer);
  let cached: ComparisonSplits | null = null;
  const splits = async () => (cached ??= await loadComparisons(config));
  const service = await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  const stageBehavior = config.behavior_if_log_dir_exists === "delete" ? "delete" : config.behavior_if_log_dir_exists === "raise" ? "raise" : "resume";
  const ctx = context !== undefined ? { argv: context.argv, commandLine: context.commandLine } : {};
  const common = {
    model_name: config.model_name,
    renderer_name: rendererName,
    lora_rank: config.lora_rank,
    seed: config.seed,
    base_url: config.base_url,
    behavior_if_log_dir_exists: stageBehavior,
    eval_every: config.eval_every,
    save_every: config.save_every,
  } as const;
  const stagesRun: string[] = [];
  try {
    const sftDir = join(config.log_path, "sft");
    const sft = await runStage("sft", sftDir, log, () =>
      supervisedMain(
        { ...common, log_path: sftDir, recipe_name: "rlhf_sft", learning_rate: config.sft_learning_rate, max_steps: config.sft_steps, lr_schedule: "linear" },
        sftMixDatasetBuilder(splits, renderer, { batchSize: config.sft_batch_size, maxLength: config.max_length, seed: config.seed, rejectedFraction: config.sft_rejected_fraction }),
        { serviceClient: service, tokenizer, ...ctx },
      ),
    );
    if (sft.ran) stagesRun.push("sft");

    const pmDir = join(config.log_path, "preference_model");
    const pm = await runStage("preference_model", pmDir, log, async () => {
      const test = (await splits()).test ?? [];
      await supervisedMain(
        { ...common, log_path: pmDir, recipe_name: "rlhf_preference_model", learning_rate: config.pm_learning_rate, max_steps: config.pm_steps, lr_schedule: "linear" },
        preferenceModelDatasetBuilder(splits, renderer, config.pm_batch_size, null),
        { serviceClient: service, tokenizer, evaluatorBuilders: [() => new PreferenceAccuracyEvaluator(test, renderer, tokenizer)], ...ctx },
      );
    });
    if (pm.ran) stagesRun.push("preference_model");

    const rlDir = join(config.log_path, "rl");
    const sftSampler = requirePath(sft.record.sampler_path, "sft sampler_path");
    const pmSampler = requirePath(pm.record.sampler_path, "preference_model sampler_path");
    const rl = await runStage("rl", rlDir, log, async () => {
      const judge = new PreferenceModelFromChatRenderer(renderer, tokenizer, await service.createSamplingClient({ modelPath: pmSampler }));
      const { train, test } = await splits();
      const prompts = uniquePrompts(train);
      const evaluators =
        config.win_rate_prompts > 0 && test !== null
          ? [new WinRateEvaluator(await service.createSamplingClient({ modelPath: sftSampler }), uniquePrompts(test).slice(0, config.win_rate_prompts), renderer, judge, { maxTokens: config.max_tokens, seed: config.seed })]
          : [];
      await rlMain(
        {
          ...common,
          log_path: rlDir,
          recipe_name: "rlhf_rl",
          learning_rate: config.rl_learning_rate,
          max_tokens: config.max_tokens,
          max_steps: config.rl_steps,
          load_checkpoint_path: requirePath(sft.record.state_path, "sft state_path"),
        },
        {
          async build() {
            const makeGroup = (p: (typeof prompts)[number]) =>
              new PairwisePreferenceGroupBuilder(p, renderer, judge, config.group_size, { pattern: config.tournament_pattern });
            return { train: new PairwisePreferenceRLDataset(prompts, config.groups_per_batch, makeGroup, config.rl_steps), test: null };
          },
        },
        service,
        { evaluators, decode: (t) => tokenizer.decode(t), ...ctx },
      );
    });
    if (rl.ran) stagesRun.push("rl");
    return { stagesRun, sftSamplerPath: sftSampler, pmSamplerPath: pmSampler, rlSamplerPath: requirePath(rl.record.sampler_path, "rl sampler_path") };
  } finally {
    await service.close();
  }
}

function requirePath(p: unknown, what: string): string {
  if (typeof p !== "string" || p.length === 0) throw new Error(`the ${what} of a finished stage is missing from its checkpoints.jsonl`);
  return p;
}
