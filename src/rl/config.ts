// The RL loop's configuration (spec §4.4): one zod schema gives the types, the defaults and the
// `--help` text. Keys are snake_case so `key=value` command lines match the Python cookbook's.
import { z } from "zod";
import { LogDirBehaviorSchema } from "../config/common.ts";
import { ConfigError } from "../config/errors.ts";

export const KLReferenceConfigSchema = z.object({
  base_model: z.string().describe("model whose logprobs the KL penalty pulls toward"),
  load_checkpoint_path: z.string().nullable().default(null).describe("optional tinker:// sampler weights for the reference"),
});

export const AsyncConfigSchema = z.object({
  max_steps_off_policy: z.number().int().min(0).describe("groups sampled by a sampler more than this many steps old are resampled"),
  groups_per_batch: z.number().int().positive().describe("groups per training step (also the number of rollout workers)"),
});

export const StreamMinibatchConfigSchema = z.object({
  groups_per_batch: z.number().int().positive().describe("groups per training iteration across all substeps and minibatches"),
  num_minibatches: z.number().int().positive().describe("forward_backward calls per optimizer substep"),
});

export const RLLossFnSchema = z.enum(["importance_sampling", "ppo", "cispo"]);

export const RolloutErrorToleranceSchema = z.union([z.boolean(), z.object({ max_retries: z.number().int().min(0) })]);

export const RLConfigSchema = z.object({
  log_path: z.string().min(1).describe("run directory: metrics.jsonl, checkpoints.jsonl, iteration_NNNNNN/ transcripts"),
  model_name: z.string().min(1).describe("base model to train"),
  recipe_name: z.string().default("rl").describe("recipe slug recorded in the training run's metadata"),
  learning_rate: z.number().positive().describe("Adam learning rate (constant)"),
  max_tokens: z.number().int().positive().describe("maximum sampled tokens per turn"),
  temperature: z.number().positive().default(1.0).describe("sampling temperature (1.0 keeps sampler and trainer logprobs comparable)"),
  lora_rank: z.number().int().positive().default(32).describe("LoRA rank of the trained adapter"),
  seed: z.number().int().default(0).describe("seed of the adapter's initialization and of rollout sampling"),
  loss_fn: RLLossFnSchema.default("importance_sampling").describe("server-side policy-gradient loss"),
  loss_fn_config: z.record(z.string(), z.number()).nullable().default(null).describe("loss parameters, e.g. clip thresholds"),
  num_substeps: z.number().int().positive().default(1).describe("optimizer steps per iteration (the batch is split this many ways)"),
  kl_penalty_coef: z.number().min(0).default(0).describe("weight of the KL penalty toward the reference (0 = off)"),
  kl_discount_factor: z.number().min(0).max(1).default(0).describe("discount for summing future KL penalties (0 = per-token)"),
  kl_reference_config: KLReferenceConfigSchema.nullable().default(null).describe("reference model; required when kl_penalty_coef > 0"),
  compute_post_kl: z.boolean().default(false).describe("also measure KL between the pre- and post-update samplers"),
  remove_constant_reward_groups: z.boolean().default(false).describe("drop groups whose members all earned the same reward"),
  rollout_error_tolerance: RolloutErrorToleranceSchema.nullable()
    .default(null)
    .describe("false/null: a failing rollout stops training; true: retry up to 3 times then skip the group; {max_retries}: custom budget"),
  async_config: AsyncConfigSchema.nullable().default(null).describe("set to train off-policy asynchronously"),
  stream_minibatch_config: StreamMinibatchConfigSchema.nullable().default(null).describe("set to start training on minibatches while sampling continues"),
  eval_every: z.number().int().min(0).default(20).describe("evaluate every N iterations (0 = never)"),
  save_every: z.number().int().min(0).default(20).describe("checkpoint every N iterations (0 = only the final one)"),
  ttl_seconds: z.number().int().positive().nullable().default(604800).describe("lifetime of periodic checkpoints (null = keep)"),
  rolling_save_every: z.number().int().min(0).default(0).describe("state-only resume point every N iterations (0 = off)"),
  rolling_ttl_seconds: z.number().int().positive().default(7200).describe("lifetime of rolling resume points"),
  num_groups_to_log: z.number().int().min(0).default(4).describe("groups per iteration shown in iteration_NNNNNN/train.html (0 = no HTML)"),
  rollout_json_export: z.boolean().default(true).describe("write iteration_NNNNNN/train_rollout_summaries.jsonl"),
  max_steps: z.number().int().positive().nullable().default(null).describe("stop after this many iterations (default: the whole dataset)"),
  load_checkpoint_path: z.string().nullable().default(null).describe("start from these weights with a fresh optimizer (ignored when resuming)"),
  renderer_name: z.string().nullable().default(null).describe("renderer used by the dataset (recorded in run metadata)"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server URL (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("what to do when log_path already holds a run"),
  wandb_project: z.string().nullable().default(null).describe("accepted for compatibility; metrics stay in metrics.jsonl"),
  wandb_name: z.string().nullable().default(null).describe("accepted for compatibility"),
});

export type RLConfig = z.output<typeof RLConfigSchema>;
export type RLConfigInput = z.input<typeof RLConfigSchema>;

/** Cross-field rules zod cannot state per field; messages name the keys involved. */
export function validateRLConfig(config: RLConfig): void {
  if (config.kl_penalty_coef > 0 && config.kl_reference_config === null) {
    throw new ConfigError(`kl_penalty_coef=${config.kl_penalty_coef} needs kl_reference_config.base_model (the model the penalty pulls toward)`);
  }
  const s = config.stream_minibatch_config;
  if (s !== null) {
    if (s.groups_per_batch % config.num_substeps !== 0) {
      throw new ConfigError(`stream_minibatch_config.groups_per_batch=${s.groups_per_batch} must be divisible by num_substeps=${config.num_substeps}`);
    }
    const perSubstep = s.groups_per_batch / config.num_substeps;
    if (perSubstep % s.num_minibatches !== 0) {
      throw new ConfigError(
        `stream_minibatch_config: groups per substep (${perSubstep}) must be divisible by num_minibatches=${s.num_minibatches}`,
      );
    }
  }
}
