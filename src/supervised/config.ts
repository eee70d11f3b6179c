// The supervised loop's configuration (docs/cookbook-parity.md#supervised-config): one zod schema for types, defaults and --help,
// made of the training core's shared field groups plus what only this loop has. Keys are
// snake_case so `key=value` command lines match the Python cookbook's.
import { z } from "zod";
import { benchmarkEvalFields } from "../eval/inline.ts";
import { inGroup } from "../config/groups.ts";
import { epochLoopFields, trainingLoopFields } from "../training/config.ts";

export const SupervisedConfigSchema = z.object({
  ...trainingLoopFields,
  ...epochLoopFields,
  ...inGroup("evaluation", {
    eval_every: z.number().int().min(0).default(10).describe("Run the evaluators (test/nll) every N steps, before the step (0 = never)"),
    infrequent_eval_every: z.number().int().min(0).default(100).describe("Run the infrequent evaluators every N steps (0 = never)"),
  }),
  ...benchmarkEvalFields,
  ...inGroup("checkpoints", {
    save_every_tokens: z.number().int().min(0).default(0).describe("Also checkpoint after this many trained tokens since the last save (0 = off)"),
    save_every_seconds: z.number().min(0).default(0).describe("Also checkpoint after this many seconds since the last save (0 = off)"),
  }),
  ...inGroup("advanced", {
    async_periodic_saves: z.boolean().default(false).describe("Do not wait for periodic saves before logging the step"),
    submit_ahead: z.number().int().min(0).default(1).describe("Batches submitted before the oldest one's results are awaited (0 = no pipelining)"),
  }),
  ...inGroup("tracking", {
    print_examples_every: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe("Write the colourised first example of every Nth batch to logs.log and train_examples.jsonl (0 = never)"),
  }),
});

export type SupervisedConfig = z.output<typeof SupervisedConfigSchema>;
export type SupervisedConfigInput = z.input<typeof SupervisedConfigSchema>;
