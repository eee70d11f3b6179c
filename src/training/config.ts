// The config fields every training loop shares, declared once (the cookbook's chz idea): a loop
// spreads these groups into its one schema, a recipe extends that schema with its dataset
// builder's fields and overrides defaults with `overrideDefaults`. `--help`, the TUI launch form,
// validation and the loop all read the resulting object; nothing is copied by hand.
import { z } from "zod";
import { LogDirBehaviorSchema, LrScheduleSchema } from "../config/common.ts";
import { isValidLoraRank, LORA_RANK_RULE } from "../tinker/loraRank.ts";
import type { AdamParams } from "../tinker/types.ts";
import { inGroup } from "../config/groups.ts";

/** Where the run lives, which model and engine it uses, and how it starts. */
export const runFields = {
  ...inGroup("run", {
    log_path: z.string().min(1).describe("Run directory: metrics.jsonl, checkpoints.jsonl, logs.log, transcripts"),
    model_name: z.string().min(1).default("tiny-chat").describe("Base model: a shipped fixture name, a local HF folder, or a hub id"),
    renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one, else role_colon)"),
    load_checkpoint_path: z.string().nullable().default(null).describe("Start from these weights with a fresh optimizer (ignored when resuming)"),
    base_url: z.string().nullable().default(null).describe('Tinker-compatible server URL, or "local" (default: the embedded engine)'),
    behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already holds a run"),
  }),
  ...inGroup("advanced", {
    server_wait_seconds: z
      .number()
      .min(0)
      .default(600)
      .describe(
        "With base_url: how long to wait for a server that went away (killed, restarted) before giving up; once it answers the run resumes from its last checkpoint (0 = fail at once)",
      ),
  }),
  ...inGroup("tracking", {
    tensorboard: z.boolean().default(false).describe("Also write the metrics as TensorBoard event files in <log_path>/tensorboard"),
    wandb_project: z
      .string()
      .nullable()
      .default(null)
      .describe(
        "Weights & Biases project: with WANDB_API_KEY set, every step is logged to W&B (@wandb/sdk); TensorBoard files are written too, and without a key the `wandb sync` command that uploads them is printed",
      ),
    wandb_name: z.string().nullable().default(null).describe("Weights & Biases run name (default: the run directory's name)"),
  }),
};

/** A LoRA rank, checked when the config is parsed (before the run directory exists). */
export const LoraRankSchema = z
  .number()
  .int()
  .positive()
  .refine(isValidLoraRank, { message: `a LoRA rank must be ${LORA_RANK_RULE}` });

/** The trained adapter. */
export const adapterFields = inGroup("run", {
  lora_rank: LoraRankSchema.default(32).describe("LoRA rank of the trained adapter (a power of two)"),
  seed: z.number().int().default(0).describe("Seed of the adapter's initialization (and of the data order and sampling where the loop has them)"),
});

/** When and how long checkpoints are kept. */
export const checkpointFields = inGroup("checkpoints", {
  save_every: z.number().int().min(0).default(20).describe("Checkpoint every N steps (0 = only the final one)"),
  ttl_seconds: z.number().int().positive().nullable().default(604800).describe("Lifetime of periodic checkpoints (null = keep; the final one is always kept)"),
  rolling_save_every: z.number().int().min(0).default(0).describe("State-only resume point every N steps, replacing the previous one (0 = off)"),
  rolling_ttl_seconds: z.number().int().positive().default(7200).describe("Lifetime of rolling resume points"),
});

/** Adam's constants (a pipeline of stages shares them and gives each stage its own learning rate). */
export const adamFields = inGroup("optimizer", {
  adam_beta1: z.number().min(0).lt(1).default(0.9).describe("Adam β1"),
  adam_beta2: z.number().min(0).lt(1).default(0.95).describe("Adam β2"),
  adam_eps: z.number().positive().default(1e-8).describe("Adam ε"),
});

/** The optimizer every loop steps with: Adam, its learning rate (a loop overrides the default) and constants. */
export const optimizerFields = {
  ...inGroup("optimizer", {
    learning_rate: z.number().positive().default(1e-4).describe("Adam learning rate (the peak of lr_schedule where the loop has one)"),
  }),
  ...adamFields,
};

/** How the learning rate moves over a run, for the loops that schedule it. */
export const lrScheduleFields = inGroup("optimizer", {
  lr_schedule: LrScheduleSchema.default("linear").describe("linear: 1−t; cosine: ½(1+cos πt); constant: 1 (t = step / total steps)"),
});

/** Everything a loop that trains an adapter has: run, adapter, checkpoints, optimizer. */
export const trainingLoopFields = { ...runFields, ...adapterFields, ...checkpointFields, ...optimizerFields };

/** Loops that pass over a dataset in epochs, with a learning-rate schedule over the whole run. */
export const epochLoopFields = {
  ...lrScheduleFields,
  ...inGroup("optimizer", {
    num_epochs: z.number().int().positive().default(1).describe("Passes over the training data"),
    max_steps: z.number().int().positive().nullable().default(null).describe("Stop after this many steps (default: num_epochs × batches)"),
  }),
};

const OptimizerConfigSchema = z.object(optimizerFields);
export type OptimizerConfig = z.output<typeof OptimizerConfigSchema>;
const AdamConfigSchema = z.object(adamFields);
export type AdamConfig = z.output<typeof AdamConfigSchema>;

/** One optim_step's parameters: the config's Adam at this step's learning rate. */
export function adamParams(config: OptimizerConfig, learningRate: number = config.learning_rate): AdamParams {
  return { learning_rate: learningRate, beta1: config.adam_beta1, beta2: config.adam_beta2, eps: config.adam_eps };
}

const RunConfigSchema = z.object({ ...runFields, ...adapterFields });
/** What the shared run machinery reads from any loop's config. */
export type TrainingRunConfig = z.output<typeof RunConfigSchema>;

const CheckpointPolicySchema = z.object(checkpointFields);
export type CheckpointPolicy = z.output<typeof CheckpointPolicySchema>;

type Overrides<S extends z.ZodObject> = { [K in keyof S["shape"]]?: z.output<S["shape"][K]> };

/**
 * The same schema with new defaults for some top-level keys; each field keeps its type and help
 * text. Unknown keys are a programming error and throw.
 */
export function overrideDefaults<S extends z.ZodObject>(schema: S, defaults: Overrides<S>): S {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, value] of Object.entries(defaults)) {
    const field = schema.shape[key] as z.ZodType | undefined;
    if (field === undefined) throw new Error(`overrideDefaults: the schema has no field ${JSON.stringify(key)}`);
    const inner = field instanceof z.ZodDefault ? (field.def.innerType as z.ZodType) : field;
    const parsed = inner.safeParse(value);
    if (!parsed.success)
      throw new Error(`overrideDefaults: default ${JSON.stringify(value)} for ${key} does not fit its schema: ${parsed.error.issues[0]?.message ?? ""}`);
    // The new default keeps the field's metadata: its help text and its form group.
    const meta = { ...(inner.meta() ?? {}), ...(field.meta() ?? {}) };
    const replaced: z.ZodType = inner.default(value as never);
    shape[key] = Object.keys(meta).length > 0 ? replaced.meta(meta) : replaced;
  }
  return schema.extend(shape) as unknown as S;
}
