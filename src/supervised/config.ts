// The supervised loop's configuration (spec §3.1): one zod schema for types, defaults and --help.
// Keys are snake_case so `key=value` command lines match the Python cookbook's.
import { z } from "zod";
import { LogDirBehaviorSchema, LrScheduleSchema } from "../config/common.ts";

export const SupervisedConfigSchema = z.object({
  log_path: z.string().min(1).describe("run directory: metrics.jsonl, checkpoints.jsonl, logs.log"),
  model_name: z.string().min(1).describe("base model to train"),
  recipe_name: z.string().default("supervised").describe("recipe slug recorded in the training run's metadata"),
  load_checkpoint_path: z.string().nullable().default(null).describe("start from these weights with a fresh optimizer (ignored when resuming)"),
  renderer_name: z.string().nullable().default(null).describe("renderer the dataset uses (recorded in run metadata)"),
  learning_rate: z.number().positive().default(1e-4).describe("peak Adam learning rate"),
  lr_schedule: LrScheduleSchema.default("linear").describe("linear: 1−t; cosine: ½(1+cos πt); constant: 1 (t = step / total steps)"),
  num_epochs: z.number().int().positive().default(1).describe("passes over the training data"),
  lora_rank: z.number().int().positive().default(32).describe("LoRA rank of the trained adapter"),
  seed: z.number().int().default(0).describe("seed of the adapter's initialization"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server URL, or \"local\" (default: the embedded engine)"),
  eval_every: z.number().int().min(0).default(10).describe("run the evaluators every N steps, before the step (0 = never)"),
  infrequent_eval_every: z.number().int().min(0).default(100).describe("run the infrequent evaluators every N steps (0 = never)"),
  save_every: z.number().int().min(0).default(20).describe("checkpoint every N steps (0 = only the final one)"),
  save_every_tokens: z.number().int().min(0).default(0).describe("also checkpoint after this many trained tokens since the last save (0 = off)"),
  save_every_seconds: z.number().min(0).default(0).describe("also checkpoint after this many seconds since the last save (0 = off)"),
  ttl_seconds: z.number().int().positive().nullable().default(604800).describe("lifetime of periodic checkpoints (null = keep; the final one is always kept)"),
  rolling_save_every: z.number().int().min(0).default(0).describe("state-only resume point every N steps, replacing the previous one (0 = off)"),
  rolling_ttl_seconds: z.number().int().positive().default(7200).describe("lifetime of rolling resume points"),
  async_periodic_saves: z.boolean().default(false).describe("do not wait for periodic saves before logging the step"),
  adam_beta1: z.number().min(0).lt(1).default(0.9).describe("Adam β1"),
  adam_beta2: z.number().min(0).lt(1).default(0.95).describe("Adam β2"),
  adam_eps: z.number().positive().default(1e-8).describe("Adam ε"),
  max_steps: z.number().int().positive().nullable().default(null).describe("stop after this many steps (default: num_epochs × batches)"),
  submit_ahead: z.number().int().min(0).default(1).describe("batches submitted before the oldest one's results are awaited (0 = no pipelining)"),
  print_examples_every: z.number().int().min(0).default(1).describe("write the colourised first example of every Nth batch to logs.log and train_examples.jsonl (0 = never)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("what to do when log_path already holds a run"),
  wandb_project: z.string().nullable().default(null).describe("accepted for compatibility; metrics stay in metrics.jsonl"),
  wandb_name: z.string().nullable().default(null).describe("accepted for compatibility"),
});

export type SupervisedConfig = z.output<typeof SupervisedConfigSchema>;
export type SupervisedConfigInput = z.input<typeof SupervisedConfigSchema>;
