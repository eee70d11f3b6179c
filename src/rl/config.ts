// The RL loop's configuration (docs/cookbook-parity.md#rl-config-and-modes): one zod schema for types, defaults and `--help`, made
// of the training core's shared field groups plus what only this loop has. Keys are snake_case so
// `key=value` command lines match the Python cookbook's.
import { z } from "zod";
import { ConfigError } from "../config/errors.ts";
import { inGroup } from "../config/groups.ts";
import { benchmarkEvalFields } from "../eval/inline.ts";
import { trainingLoopFields } from "../training/config.ts";

export const KLReferenceConfigSchema = z.object({
  base_model: z.string().describe("model whose logprobs the KL penalty pulls toward"),
  load_checkpoint_path: z.string().nullable().default(null).describe("optional tinker:// sampler weights for the reference"),
});

export const AsyncConfigSchema = z.object({
  max_steps_off_policy: z.number().int().min(0).default(1).describe("Groups sampled by a sampler more than this many steps old are resampled"),
  groups_per_batch: z
    .number()
    .int()
    .positive()
    .nullable()
    .default(null)
    .describe("Groups per training step, also the number of rollout workers (default: groups_per_batch)"),
});

export const StreamMinibatchConfigSchema = z.object({
  groups_per_batch: z
    .number()
    .int()
    .positive()
    .nullable()
    .default(null)
    .describe("Groups per iteration across all substeps and minibatches (default: groups_per_batch)"),
  num_minibatches: z.number().int().positive().default(2).describe("forward_backward calls per optimizer substep"),
});

export const RLLossFnSchema = z.enum(["importance_sampling", "ppo", "cispo", "dro"]);

export const MinViableGroupSchema = z.object({
  strategy: z.literal("min_viable_group"),
  min_successful: z.number().int().positive().nullable().optional(),
  max_retries: z.number().int().min(0).optional(),
  per_rollout_timeout: z.number().positive().nullable().optional(),
});

// MinViableGroup's object first: zod drops unknown keys, so {max_retries} would otherwise swallow it.
export const RolloutErrorToleranceSchema = z.union([
  z.boolean(),
  z.literal("min_viable_group"),
  MinViableGroupSchema,
  z.object({ max_retries: z.number().int().min(0) }),
]);

export const RLConfigSchema = z.object({
  // RL keeps the learning rate constant (the cookbook's RL loop has no schedule).
  ...trainingLoopFields,
  ...inGroup("optimizer", {
    max_steps: z.number().int().positive().nullable().default(null).describe("Stop after this many iterations (default: the whole dataset)"),
    loss_fn: RLLossFnSchema.default("importance_sampling").describe("Server-side policy-gradient loss"),
    loss_fn_config: z.record(z.string(), z.number()).nullable().default(null).describe("Loss parameters, e.g. clip thresholds"),
    num_substeps: z.number().int().positive().default(1).describe("Optimizer steps per iteration (the batch is split this many ways)"),
    kl_penalty_coef: z.number().min(0).default(0).describe("Weight of the KL penalty toward the reference model (0 = off)"),
    kl_discount_factor: z.number().min(0).max(1).default(0).describe("Discount for summing future KL penalties (0 = per-token)"),
  }),
  ...inGroup("data", {
    max_tokens: z.number().int().positive().describe("Maximum sampled tokens per turn"),
    temperature: z.number().positive().default(1.0).describe("Sampling temperature (1.0 keeps sampler and trainer logprobs comparable)"),
    group_size: z.number().int().positive().default(4).describe("Episodes per group; rewards are centred within a group"),
    groups_per_batch: z.number().int().positive().default(16).describe("Groups (problems) per iteration"),
  }),
  ...inGroup("evaluation", {
    eval_every: z.number().int().min(0).default(20).describe("Evaluate on the test set every N iterations (0 = never)"),
    infrequent_eval_every: z.number().int().min(0).default(0).describe("Run the infrequent evaluators (infrequent_benchmarks) every N iterations (0 = never)"),
  }),
  ...benchmarkEvalFields,
  ...inGroup("tracking", {
    num_groups_to_log: z.number().int().min(0).default(4).describe("Groups per iteration shown in iteration_NNNNNN/train.html (0 = no HTML)"),
    rollout_json_export: z.boolean().default(true).describe("Write iteration_NNNNNN/train_rollout_summaries.jsonl"),
  }),
  ...inGroup("advanced", {
    kl_reference_config: KLReferenceConfigSchema.nullable().default(null).describe("Reference model of the KL penalty (default: the base model)"),
    compute_post_kl: z.boolean().default(false).describe("Also measure KL between the pre- and post-update samplers"),
    remove_constant_reward_groups: z.boolean().default(false).describe("Drop groups whose members all earned the same reward"),
    rollout_error_tolerance: RolloutErrorToleranceSchema.nullable()
      .default(null)
      .describe(
        'false/null: a failing rollout stops training; true: retry up to 3 times then skip the group; {max_retries}: custom budget; min_viable_group or {"strategy":"min_viable_group","min_successful":n,"max_retries":3,"per_rollout_timeout":s}: keep a group once ceil(0.75·group_size) (or n) succeeded',
      ),
    async_config: AsyncConfigSchema.nullable().default(null).describe("Set (e.g. async_config.max_steps_off_policy=2) to train off-policy asynchronously"),
    stream_minibatch_config: StreamMinibatchConfigSchema.nullable()
      .default(null)
      .describe("Set (e.g. stream_minibatch_config.num_minibatches=2) to train minibatches while sampling continues"),
  }),
});

export type RLConfig = z.output<typeof RLConfigSchema>;
export type RLConfigInput = z.input<typeof RLConfigSchema>;

/** The loop's view of the config: the async/stream group counts default to groups_per_batch. */
export type ResolvedRLConfig = Omit<RLConfig, "async_config" | "stream_minibatch_config"> & {
  async_config: { max_steps_off_policy: number; groups_per_batch: number } | null;
  stream_minibatch_config: { groups_per_batch: number; num_minibatches: number } | null;
};

/** Fills derived defaults and checks the rules zod cannot state per field; messages name the keys. */
export function resolveRLConfig(config: RLConfig): ResolvedRLConfig {
  const a = config.async_config;
  const s = config.stream_minibatch_config;
  const resolved: ResolvedRLConfig = {
    ...config,
    async_config: a === null ? null : { max_steps_off_policy: a.max_steps_off_policy, groups_per_batch: a.groups_per_batch ?? config.groups_per_batch },
    stream_minibatch_config: s === null ? null : { groups_per_batch: s.groups_per_batch ?? config.groups_per_batch, num_minibatches: s.num_minibatches },
  };
  const stream = resolved.stream_minibatch_config;
  if (stream !== null) {
    if (stream.groups_per_batch % config.num_substeps !== 0) {
      throw new ConfigError(`stream_minibatch_config.groups_per_batch=${stream.groups_per_batch} must be divisible by num_substeps=${config.num_substeps}`);
    }
    const perSubstep = stream.groups_per_batch / config.num_substeps;
    if (perSubstep % stream.num_minibatches !== 0) {
      throw new ConfigError(`stream_minibatch_config: groups per substep (${perSubstep}) must be divisible by num_minibatches=${stream.num_minibatches}`);
    }
  }
  return resolved;
}
