// The three-stage RLHF pipeline (docs/cookbook-parity.md#dpo-preference-rl-and-distillation, the cookbook's rlhf_pipeline), offline by default:
//   1. sft               supervised fine-tuning on the comparison prompts answered by either side
//   2. preference_model  a LoRA trained to answer "A" or "B" after a rendered comparison
//   3. rl                pairwise-preference RL from the SFT weights, rewarded by tournaments the
//                        preference model judges; test/win_rate against the SFT policy
// Each stage is its own run folder under log_path; finished stages are skipped on a rerun and an
// interrupted stage resumes from its last checkpoint.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { inGroup, tagGroup } from "../config/groups.ts";
import type { RecipeContext } from "../config/recipe.ts";
import { LogDirBehaviorSchema, type LogDirBehavior } from "../config/common.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { getRenderer } from "../renderers/registry.ts";
import { RLConfigSchema } from "../rl/config.ts";
import { main as rlMain } from "../rl/train.ts";
import { chooseEngine, createServiceClient } from "../service.ts";
import { SupervisedConfigSchema } from "../supervised/config.ts";
import { main as supervisedMain } from "../supervised/train.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import { openSampler, type SamplerSource } from "../training/reconnectingSampler.ts";
import { adamFields, adapterFields, checkpointFields, overrideDefaults, runFields, type AdamConfig, type CheckpointPolicy } from "../training/config.ts";
import type { Renderer } from "../renderers/base.ts";
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { comparisonSourceFields, loadComparisons, type ComparisonSourceConfig, type ComparisonSplits } from "./datasets.ts";
import { PairwisePreferenceGroupBuilder, PairwisePreferenceRLDataset, TOURNAMENT_PATTERNS, type TournamentPattern } from "./pairwiseEnv.ts";
import { preferenceModelDatasetBuilder } from "./preferenceData.ts";
import { PreferenceAccuracyEvaluator } from "./preferenceEval.ts";
import { PreferenceModelFromChatRenderer, type PreferenceModel } from "./preferenceModel.ts";
import { sftMixDatasetBuilder, uniquePrompts } from "./sftMix.ts";
import { runStage, type StageOutcome } from "./stages.ts";
import { computeWinRate, WinRateEvaluator } from "./winRate.ts";

/** What every pipeline recipe shares: the run, the adapter, checkpoints and the comparisons. */
export const pipelineFields = {
  ...runFields,
  ...adapterFields,
  ...checkpointFields,
  ...adamFields,
  ...comparisonSourceFields,
  ...inGroup("evaluation", { eval_every: z.number().int().min(0).default(5).describe("Evaluate every N steps in each stage") }),
};

export const rlhfConfigSchema = overrideDefaults(
  z.object({
    ...pipelineFields,
    max_length: z.number().int().positive().nullable().default(512).describe("Truncate SFT examples to this many tokens"),
    ...inGroup("optimizer", {
      sft_learning_rate: z.number().positive().default(2e-3).describe("Stage 1 learning rate"),
      sft_batch_size: z.number().int().positive().default(16).describe("Stage 1 conversations per step"),
      sft_steps: z.number().int().positive().default(60).describe("Stage 1 steps"),
      sft_rejected_fraction: z
        .number()
        .min(0)
        .max(1)
        .default(0.75)
        .describe("Stage 1: share of prompts answered by the dispreferred completion (how much the SFT policy has to unlearn)"),
      pm_learning_rate: z.number().positive().default(1e-3).describe("Stage 2 learning rate"),
      pm_batch_size: z.number().int().positive().default(16).describe("Stage 2 comparisons per step"),
      pm_steps: z.number().int().positive().default(80).describe("Stage 2 steps"),
      rl_learning_rate: z.number().positive().default(2e-3).describe("Stage 3 learning rate (constant)"),
      rl_steps: z.number().int().positive().default(20).describe("Stage 3 iterations"),
    }),
    group_size: z.number().int().min(2).default(4).describe("Stage 3 replies per prompt (one tournament)"),
    groups_per_batch: z.number().int().positive().default(8).describe("Stage 3 prompts per iteration"),
    max_tokens: z.number().int().positive().default(40).describe("Stage 3 maximum reply tokens"),
    tournament_pattern: z.enum(TOURNAMENT_PATTERNS).default("all_pairs_both_ways").describe("Which matchups each group plays"),
    win_rate_prompts: tagGroup("evaluation", z.number().int().min(0).default(64).describe("Held-out prompts for test/win_rate (0 = no win-rate eval)")),
  }),
  {
    log_path: "/tmp/tinker-examples/rlhf",
    dataset: "concise",
    lora_rank: 16,
    save_every: 10,
    behavior_if_log_dir_exists: "resume",
  },
);
export type RlhfConfig = z.output<typeof rlhfConfigSchema>;

export interface RlhfResult {
  stagesRun: string[];
  sftSamplerPath: string;
  pmSamplerPath: string;
  rlSamplerPath: string;
  /** test/win_rate of the final RL policy against the SFT policy (null when not measured). */
  finalWinRate: number | null;
}

/** What every stage of a pipeline shares. */
export interface PipelineContext {
  /**
   * The embedded engine every stage shares; null on a remote server, where each stage owns its
   * connection so that it can resume after the server goes away.
   */
  engine: ServiceClient | null;
  /** Judges and baselines: on the shared engine, or each with a reconnecting connection. */
  samplers: SamplerSource;
  /** Samplers opened beside the stages, released by close(). */
  opened: (() => Promise<void>)[];
  renderer: Renderer;
  tokenizer: Tokenizer;
  splits: () => Promise<ComparisonSplits>;
  common: {
    model_name: string;
    renderer_name: string;
    lora_rank: number;
    seed: number;
    base_url: string | null;
    server_wait_seconds: number;
    behavior_if_log_dir_exists: LogDirBehavior;
    eval_every: number;
  } & CheckpointPolicy &
    AdamConfig;
  /** The launching command, recorded by each stage under the stage's own recipe name. */
  runArgs: { argv: readonly string[]; commandLine: string };
  log: (line: string) => void;
}

export async function openPipeline(
  config: {
    model_name: string;
    renderer_name: string | null;
    base_url: string | null;
    server_wait_seconds: number;
    lora_rank: number;
    seed: number;
    eval_every: number;
    behavior_if_log_dir_exists: string;
  } & CheckpointPolicy &
    AdamConfig &
    ComparisonSourceConfig,
  context: RecipeContext | undefined,
  log: (line: string) => void,
  options: { standalone?: boolean } = {},
): Promise<PipelineContext> {
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const tokenizer = await getTokenizer(config.model_name);
  const renderer = getRenderer(rendererName, tokenizer);
  let cached: ComparisonSplits | null = null;
  const splits = async () => (cached ??= await loadComparisons(config));
  const serverOptions = config.base_url !== null ? { baseUrl: config.base_url } : {};
  const engine = chooseEngine(serverOptions).kind === "embedded" ? await createServiceClient(serverOptions) : null;
  // A pipeline resumes stage by stage, so its stages never ask: they resume unless told otherwise.
  // A single-run recipe keeps the person's choice, "ask" included.
  const behavior = LogDirBehaviorSchema.parse(
    options.standalone === true
      ? config.behavior_if_log_dir_exists
      : config.behavior_if_log_dir_exists === "delete"
        ? "delete"
        : config.behavior_if_log_dir_exists === "raise"
          ? "raise"
          : "resume",
  );
  return {
    engine,
    samplers: { shared: engine, baseUrl: config.base_url, waitMs: config.server_wait_seconds * 1000, log: { warn: (m) => log(`WARNING ${m}`) } },
    opened: [],
    renderer,
    tokenizer,
    splits,
    common: {
      model_name: config.model_name,
      renderer_name: rendererName,
      lora_rank: config.lora_rank,
      seed: config.seed,
      base_url: config.base_url,
      server_wait_seconds: config.server_wait_seconds,
      behavior_if_log_dir_exists: behavior,
      eval_every: config.eval_every,
      save_every: config.save_every,
      ttl_seconds: config.ttl_seconds,
      rolling_save_every: config.rolling_save_every,
      rolling_ttl_seconds: config.rolling_ttl_seconds,
      adam_beta1: config.adam_beta1,
      adam_beta2: config.adam_beta2,
      adam_eps: config.adam_eps,
    },
    runArgs: { argv: context?.argv ?? process.argv.slice(2), commandLine: context?.commandLine ?? process.argv.join(" ") },
    log,
  };
}

/** The stage's service client: the shared engine, or none (the stage opens and owns its own). */
function stageEngine(p: PipelineContext): { serviceClient?: ServiceClient } {
  return p.engine !== null ? { serviceClient: p.engine } : {};
}

/** A sampler of a finished stage's checkpoint (a judge, a baseline), released with the pipeline. */
export async function stageSampler(p: PipelineContext, samplerPath: string, role: string): Promise<SamplingClient> {
  const { client, close } = await openSampler(p.samplers, { baseModel: p.common.model_name, modelPath: samplerPath }, role);
  p.opened.push(close);
  return client;
}

/** Releases the pipeline's samplers and shared engine. */
export async function closePipeline(p: PipelineContext): Promise<void> {
  for (const close of p.opened.splice(0)) await close();
  await p.engine?.close();
}

/** Stage: SFT on the comparison prompts answered by a mix of their completions. */
export function sftStage(
  p: PipelineContext,
  dir: string,
  o: { learningRate: number; steps: number; batchSize: number; maxLength: number | null; rejectedFraction: number; recipeName: string },
): Promise<StageOutcome> {
  return runStage("sft", dir, p.log, () =>
    supervisedMain(
      SupervisedConfigSchema.parse({ ...p.common, log_path: dir, learning_rate: o.learningRate, max_steps: o.steps, lr_schedule: "linear" }),
      sftMixDatasetBuilder(p.splits, p.renderer, { batchSize: o.batchSize, maxLength: o.maxLength, seed: p.common.seed, rejectedFraction: o.rejectedFraction }),
      { ...stageEngine(p), tokenizer: p.tokenizer, context: { ...p.runArgs, recipeName: o.recipeName } },
    ),
  );
}

/** Stage: a preference model trained with the SFT loop, test/pm_accuracy on held-out comparisons. */
export function preferenceModelStage(
  p: PipelineContext,
  dir: string,
  o: { learningRate: number; steps: number; batchSize: number; recipeName: string; skipFinished?: boolean },
): Promise<StageOutcome> {
  const skip = o.skipFinished === undefined ? {} : { skipFinished: o.skipFinished };
  return runStage(
    "preference_model",
    dir,
    p.log,
    async () => {
      const test = (await p.splits()).test ?? [];
      await supervisedMain(
        SupervisedConfigSchema.parse({ ...p.common, log_path: dir, learning_rate: o.learningRate, max_steps: o.steps, lr_schedule: "linear" }),
        preferenceModelDatasetBuilder(p.splits, p.renderer, o.batchSize, null),
        {
          ...stageEngine(p),
          tokenizer: p.tokenizer,
          evaluatorBuilders: [() => new PreferenceAccuracyEvaluator(test, p.renderer, p.tokenizer)],
          context: { ...p.runArgs, recipeName: o.recipeName },
        },
      );
    },
    skip,
  );
}

export interface PairwiseRlStageOptions {
  learningRate: number;
  steps: number;
  groupSize: number;
  groupsPerBatch: number;
  maxTokens: number;
  pattern: TournamentPattern;
  /** Weights to start from (a finished SFT stage's state_path), or null for the base model. */
  initialStatePath: string | null;
  judge: PreferenceModel;
  /** test/win_rate against this sampler on held-out prompts, judged by `judge`. */
  winRate?: { baseline: SamplingClient; prompts: number };
  recipeName: string;
}

/** Stage: pairwise-preference RL on the comparison prompts, rewarded by tournaments. */
export function pairwiseRlStage(p: PipelineContext, dir: string, o: PairwiseRlStageOptions): Promise<StageOutcome> {
  return runStage("rl", dir, p.log, async () => {
    const { train, test } = await p.splits();
    const prompts = uniquePrompts(train);
    const evaluators =
      o.winRate !== undefined && o.winRate.prompts > 0 && test !== null
        ? [
            new WinRateEvaluator(o.winRate.baseline, uniquePrompts(test).slice(0, o.winRate.prompts), p.renderer, o.judge, {
              maxTokens: o.maxTokens,
              seed: p.common.seed,
            }),
          ]
        : [];
    await rlMain(
      RLConfigSchema.parse({
        ...p.common,
        log_path: dir,
        learning_rate: o.learningRate,
        max_tokens: o.maxTokens,
        max_steps: o.steps,
        group_size: o.groupSize,
        groups_per_batch: o.groupsPerBatch,
        load_checkpoint_path: o.initialStatePath,
      }),
      {
        async build() {
          const makeGroup = (prompt: (typeof prompts)[number]) =>
            new PairwisePreferenceGroupBuilder(prompt, p.renderer, o.judge, o.groupSize, { pattern: o.pattern });
          return { train: new PairwisePreferenceRLDataset(prompts, o.groupsPerBatch, makeGroup, o.steps), test: null };
        },
      },
      { ...stageEngine(p), evaluators, decode: (t: readonly number[]) => p.tokenizer.decode(t), context: { ...p.runArgs, recipeName: o.recipeName } },
    );
  });
}

export async function runRlhfPipeline(config: RlhfConfig, context?: RecipeContext, log: (line: string) => void = (l) => console.log(l)): Promise<RlhfResult> {
  const p = await openPipeline(config, context, log);
  const stagesRun: string[] = [];
  try {
    const sft = await sftStage(p, join(config.log_path, "sft"), {
      learningRate: config.sft_learning_rate,
      steps: config.sft_steps,
      batchSize: config.sft_batch_size,
      maxLength: config.max_length,
      rejectedFraction: config.sft_rejected_fraction,
      recipeName: "rlhf_sft",
    });
    if (sft.ran) stagesRun.push("sft");
    const pm = await preferenceModelStage(p, join(config.log_path, "preference_model"), {
      learningRate: config.pm_learning_rate,
      steps: config.pm_steps,
      batchSize: config.pm_batch_size,
      recipeName: "rlhf_preference_model",
    });
    if (pm.ran) stagesRun.push("preference_model");
    const sftSampler = requirePath(sft.record.sampler_path, "sft sampler_path");
    const pmSampler = requirePath(pm.record.sampler_path, "preference_model sampler_path");
    const judge = new PreferenceModelFromChatRenderer(p.renderer, p.tokenizer, await stageSampler(p, pmSampler, "judge"));
    const rl = await pairwiseRlStage(p, join(config.log_path, "rl"), {
      learningRate: config.rl_learning_rate,
      steps: config.rl_steps,
      groupSize: config.group_size,
      groupsPerBatch: config.groups_per_batch,
      maxTokens: config.max_tokens,
      pattern: config.tournament_pattern,
      initialStatePath: requirePath(sft.record.state_path, "sft state_path"),
      judge,
      winRate: { baseline: await stageSampler(p, sftSampler, "win-rate baseline"), prompts: config.win_rate_prompts },
      recipeName: "rlhf_rl",
    });
    if (rl.ran) stagesRun.push("rl");
    const rlSampler = requirePath(rl.record.sampler_path, "rl sampler_path");
    // The RL loop evaluates before each step, never after its last one: score the final policy here.
    const { test } = await p.splits();
    let finalWinRate: number | null = null;
    if (config.win_rate_prompts > 0 && test !== null) {
      const r = await computeWinRate(
        await stageSampler(p, rlSampler, "final policy"),
        await stageSampler(p, sftSampler, "win-rate baseline"),
        uniquePrompts(test).slice(0, config.win_rate_prompts),
        p.renderer,
        judge,
        { maxTokens: config.max_tokens, seed: config.seed },
      );
      finalWinRate = r.winRate;
      log(
        `final policy vs SFT: test/win_rate ${r.winRate.toFixed(3)} (${r.wins} wins, ${r.losses} losses, ${r.ties} ties over ${r.wins + r.losses + r.ties} judgements)`,
      );
    }
    const result: RlhfResult = { stagesRun, sftSamplerPath: sftSampler, pmSamplerPath: pmSampler, rlSamplerPath: rlSampler, finalWinRate };
    writeFileSync(join(config.log_path, "pipeline.json"), JSON.stringify(result, null, 2) + "\n");
    return result;
  } finally {
    await closePipeline(p);
  }
}

export function requirePath(p: unknown, what: string): string {
  if (typeof p !== "string" || p.length === 0) throw new Error(`the ${what} of a finished stage is missing from its checkpoints.jsonl`);
  return p;
}
