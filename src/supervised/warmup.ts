// A short supervised warm-up before RL, for environments whose reply format the base model has
// never seen (a tool call, a move in a game): LoRA fine-tuning on synthetic transcripts into a side
// directory, whose final weights RL then starts from. A finished warm-up with the same settings
// (recorded in warmup.json beside it) is reused, so re-running a recipe does not redo it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RecipeContext } from "../config/recipe.ts";
import { writeFileAtomic } from "../files/durable.ts";
import { resolveRendererName } from "../modelInfo.ts";
import type { Renderer } from "../renderers/base.ts";
import type { TrainOnWhat } from "../renderers/types.ts";
import { getRenderer } from "../renderers/registry.ts";
import { getLastCheckpoint } from "../runs/checkpoints.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import { datumFromModelInputWeights } from "./common.ts";
import { SupervisedConfigSchema } from "./config.ts";
import { SupervisedDatasetFromRows } from "./data.ts";
import { softReplyDatum, type WarmupExample } from "./softReply.ts";
import { main as supervisedMain } from "./train.ts";
import type { SupervisedDatasetBuilder } from "./types.ts";

export interface WarmupSpec {
  /** The RL run's directory; the warm-up goes to `<log_path>-warmup`. */
  log_path: string;
  model_name: string;
  renderer_name: string | null;
  base_url: string | null;
  lora_rank: number;
  seed: number;
  steps: number;
  batch_size: number;
  learning_rate: number;
  /** Names the transcripts (their generator and its settings): a different value redoes the warm-up. */
  data: string;
  /** Which messages the loss is on (default every assistant message). */
  train_on?: TrainOnWhat;
}

type RunFieldsOfWarmup = Pick<WarmupSpec, "log_path" | "model_name" | "renderer_name" | "base_url" | "lora_rank" | "seed">;

/** The fields a warm-up takes from its RL recipe's config as they are. */
export function warmupRunFields(config: RunFieldsOfWarmup): RunFieldsOfWarmup {
  const { log_path, model_name, renderer_name, base_url, lora_rank, seed } = config;
  return { log_path, model_name, renderer_name, base_url, lora_rank, seed };
}

export interface WarmupResult {
  /** Training state of the final weights (RL's load_checkpoint_path). */
  statePath: string;
  /** Sampler weights of the same, for a frozen copy of the starting policy. */
  samplerPath: string | null;
  reused: boolean;
}

function finished(dir: string, spec: WarmupSpec): WarmupResult | null {
  const marker = join(dir, "warmup.json");
  if (!existsSync(marker)) return null;
  try {
    if (readFileSync(marker, "utf8") !== `${JSON.stringify(spec)}\n`) return null;
  } catch {
    return null;
  }
  const last = getLastCheckpoint(dir);
  if (last?.final !== true || typeof last.state_path !== "string") return null;
  return { statePath: last.state_path, samplerPath: typeof last.sampler_path === "string" ? last.sampler_path : null, reused: true };
}

/**
 * Runs the warm-up (linear decay from `learning_rate`, loss on the assistant messages `train_on`
 * picks) unless an identical one has finished, and returns its final weights. A transcript is a
 * conversation, or a conversation whose last reply may be any of several (trained toward all).
 */
export async function supervisedWarmup(
  spec: WarmupSpec,
  transcripts: (renderer: Renderer, count: number) => WarmupExample[],
  context?: RecipeContext,
): Promise<WarmupResult> {
  return supervisedWarmupOn(
    spec,
    (renderer) => ({
      build: async () => {
        const trainOn = spec.train_on ?? "all_assistant_messages";
        const train = new SupervisedDatasetFromRows(transcripts(renderer, spec.steps * spec.batch_size), spec.batch_size, (row) => {
          if (!Array.isArray(row)) return softReplyDatum(renderer, row, trainOn);
          const ex = renderer.buildSupervisedExample(row, trainOn);
          return datumFromModelInputWeights(ex.modelInput, ex.weights);
        });
        return { train, test: null };
      },
    }),
    context,
  );
}

/**
 * The same for a warm-up whose datums are not plain transcripts (per-token weights of their own):
 * `dataset` builds the training set, `spec.steps × spec.batch_size` examples; `spec.data` must name
 * everything it depends on, since an identical spec reuses a finished warm-up.
 */
export async function supervisedWarmupOn(
  spec: WarmupSpec,
  dataset: (renderer: Renderer) => SupervisedDatasetBuilder,
  context?: RecipeContext,
): Promise<WarmupResult> {
  const dir = `${spec.log_path}-warmup`;
  const done = finished(dir, spec);
  if (done !== null) return done;
  const tokenizer = await getTokenizer(spec.model_name);
  const renderer = getRenderer(resolveRendererName(spec.model_name, spec.renderer_name), tokenizer);
  const config = SupervisedConfigSchema.parse({
    log_path: dir,
    model_name: spec.model_name,
    renderer_name: spec.renderer_name,
    base_url: spec.base_url,
    behavior_if_log_dir_exists: "delete",
    lora_rank: spec.lora_rank,
    seed: spec.seed,
    learning_rate: spec.learning_rate,
    lr_schedule: "linear",
    max_steps: spec.steps,
    eval_every: 0,
    infrequent_eval_every: 0,
    save_every: 0,
    print_examples_every: 0,
  });
  await supervisedMain(config, dataset(renderer), { context });
  const last = getLastCheckpoint(dir);
  if (last?.final !== true || typeof last.state_path !== "string")
    throw new Error(`warm-up: ${dir}/checkpoints.jsonl has no final checkpoint with a state_path`);
  writeFileAtomic(join(dir, "warmup.json"), `${JSON.stringify(spec)}\n`);
  return { statePath: last.state_path, samplerPath: typeof last.sampler_path === "string" ? last.sampler_path : null, reused: false };
}
