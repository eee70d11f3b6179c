// An experiment file: several training runs (a list, a grid of models × datasets × values of any
// config key, or both) with shared defaults, the test sets every trained model and every untrained
// base model is compared on, and the evaluation settings. One zod schema validates the TypeScript
// form (`defineExperiment({...})`) and the JSON/YAML form alike.
import { z } from "zod";
import { UsageError } from "../config/errors.ts";

/** An experiment file that cannot run as written: the message names the file, the run and the key. */
export class ExperimentFileError extends UsageError {
  override name = "ExperimentFileError";
}

/** Folder-safe: a run's directory is experiments/<experiment>/<run>. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.+=-]*$/;
const safeName = (what: string) =>
  z.string().regex(SAFE_NAME, `${what} must start with a letter or digit and use only letters, digits and _ . + = - (it names a folder)`);

/** `key: value` config overrides of a recipe, as on its command line (`key=value`); nested objects or dotted keys. */
const OverridesSchema = z
  .record(z.string(), z.unknown())
  .default({})
  .describe("Config overrides (recipe field → value); dotted keys or nested objects for nested fields");

export const RunSpecSchema = z.strictObject({
  name: safeName("a run name").optional().describe("Run name (default: <recipe>_<index>)"),
  recipe: z.string().min(1).describe("Recipe name (cookbook recipes)"),
  overrides: OverridesSchema,
});

/** A grid axis entry: a bare value (a model name, a dataset path) or a named group of overrides. */
const AxisEntrySchema = z.union([
  z.string().min(1),
  z.strictObject({
    name: safeName("a grid entry's name").describe("Short name used in run names"),
    overrides: OverridesSchema,
  }),
]);
export type AxisEntry = z.output<typeof AxisEntrySchema>;

export const GridSchema = z.strictObject({
  recipe: z.string().min(1).describe("Recipe every grid run uses"),
  models: z.array(AxisEntrySchema).min(1).optional().describe("Models: a name sets model_name; {name, overrides} sets anything"),
  datasets: z.array(AxisEntrySchema).min(1).optional().describe("Datasets: a path or hub id sets dataset; {name, overrides} sets anything"),
  values: z
    .record(z.string(), z.array(z.unknown()).min(1, "a grid key needs at least one value"))
    .default({})
    .describe("Config key → the values to try (each combination is a run)"),
  overrides: OverridesSchema.describe("Overrides shared by every grid run (after the experiment's defaults)"),
});

/** A test set: a benchmark spec (`arithmetic`, `nll:<file>`, `qa:<file>`, `mc:<file>`, …) and its sampling settings. */
export const TestSetSpecSchema = z.union([
  z.string().min(1),
  z.strictObject({
    benchmark: z.string().min(1).describe("Benchmark spec, e.g. nll:data/test.jsonl or arithmetic"),
    max_examples: z.number().int().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).optional(),
    num_samples: z.number().int().positive().optional(),
  }),
]);
export type TestSetSpec = z.output<typeof TestSetSpecSchema>;

export const EvalSettingsSchema = z.strictObject({
  max_examples: z.number().int().positive().optional().describe("Evaluate only the first N examples of every test set"),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).optional(),
  num_samples: z.number().int().positive().optional(),
  concurrency: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  base_url: z.string().nullable().optional().describe("Service to evaluate on (default: the runs' common base_url, else the embedded engine)"),
});
export type EvalSettings = z.output<typeof EvalSettingsSchema>;

export const ExperimentSchema = z
  .strictObject({
    name: safeName("the experiment name").describe("Experiment name: outputs go to <root>/<name>/"),
    description: z.string().optional(),
    defaults: OverridesSchema.describe("Overrides shared by every run (runs and grid values win)"),
    runs: z.array(RunSpecSchema).default([]).describe("Runs listed one by one"),
    grid: GridSchema.optional().describe("Runs expanded from models × datasets × values"),
    test_sets: z.array(TestSetSpecSchema).default([]).describe("Benchmarks every model is compared on"),
    baselines: z
      .union([z.boolean(), z.array(z.string().min(1))])
      .default(true)
      .describe("Untrained base models evaluated beside the runs: true = every runs' model_name, or a list"),
    eval: EvalSettingsSchema.default({}),
    key_metric: z.string().optional().describe("Training metric the batch status shows per run (default: the recipe's loss or reward)"),
  })
  .refine((e) => e.runs.length > 0 || e.grid !== undefined, { message: "an experiment needs runs, a grid, or both", path: ["runs"] });

export type Experiment = z.output<typeof ExperimentSchema>;
/** What an experiment file exports; defaults may be left out. */
export type ExperimentInput = z.input<typeof ExperimentSchema>;

/**
 * The typed form of an experiment file: `export default defineExperiment({ name, grid, test_sets })`.
 * It only gives the object its type; `cookbook batch` validates it (with the recipes' schemas).
 */
export function defineExperiment(experiment: ExperimentInput): ExperimentInput {
  return experiment;
}
