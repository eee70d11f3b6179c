// What a batch will do, checked before anything trains: every run's overrides flattened to the
// `key=value` arguments of `cookbook run` and parsed against its recipe's schema (an error names
// the run and the key), the baselines, and the test sets resolved to benchmarks.
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { parseConfigArgs } from "../config/parse.ts";
import { isPlainObject, listObjectPaths } from "../config/fields.ts";
import { loadRecipe, type RecipeEntry } from "../config/recipe.ts";
import type { BenchmarkConfigOverrides } from "../eval/benchmark.ts";
import { resolveBenchmark } from "../eval/registry.ts";
import { expandRuns, resolveRelative } from "./expand.ts";
import { ExperimentFileError, type Experiment, type TestSetSpec } from "./schema.ts";

/** Keys the batch sets itself on every run. */
const RESERVED_KEYS = new Set(["log_path", "behavior_if_log_dir_exists"]);
/** Benchmarks whose `:source` is a local file. */
const FILE_BENCHMARKS = new Set(["nll", "qa", "mc"]);

export interface PlannedRun {
  name: string;
  recipe: string;
  /** Every override as a dotted key (defaults, grid or run overrides, axis values merged). */
  overrides: Record<string, unknown>;
  /** The same overrides as `cookbook run` arguments, without log_path. */
  args: string[];
  /** The recipe's parsed config with these overrides (defaults filled in). */
  config: Record<string, unknown>;
}

export type EvalOverrides = Partial<Pick<BenchmarkConfigOverrides, "max_examples" | "max_tokens" | "temperature" | "num_samples" | "concurrency" | "seed">>;

export interface PlannedTestSet {
  /** The benchmark spec, relative paths resolved (`nll:/abs/persona_test.jsonl`). */
  spec: string;
  /** The benchmark's name: the comparison's column (`nll_persona_test`, `arithmetic`). */
  name: string;
  kind: "nll" | "accuracy";
  metric: "nll" | "accuracy";
  higher_is_better: boolean;
  /** The experiment's eval settings with this test set's own on top. */
  settings: EvalOverrides;
}

export interface ExperimentPlan {
  name: string;
  /** Absolute path of the experiment file. */
  file: string;
  description?: string;
  runs: PlannedRun[];
  /** Base models evaluated untrained. */
  baselines: string[];
  testSets: PlannedTestSet[];
  /** Service for the evaluation: null = the embedded engine. */
  evalBaseUrl: string | null;
  keyMetric?: string;
}

/** A value as `cookbook run` reads it after `key=`. */
export function argText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : value > 0 ? "inf" : "-inf";
  if (typeof value === "boolean" || value === null) return String(value);
  return JSON.stringify(value);
}

/** Nested objects of the schema's object fields become dotted keys; anything else is one value. */
function flatten(layer: Record<string, unknown>, objectPaths: ReadonlySet<string>, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, value] of Object.entries(layer)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    if (isPlainObject(value) && objectPaths.has(path)) flatten(value, objectPaths, path, out);
    else if (value !== undefined) out[path] = value;
  }
  return out;
}

function testSetSettings(spec: TestSetSpec): { benchmark: string; settings: EvalOverrides } {
  if (typeof spec === "string") return { benchmark: spec, settings: {} };
  const { benchmark, ...settings } = spec;
  return { benchmark, settings };
}

function planTestSets(experiment: Experiment, file: string): PlannedTestSet[] {
  const baseDir = dirname(file);
  const { base_url: _baseUrl, ...shared } = experiment.eval;
  const out: PlannedTestSet[] = [];
  experiment.test_sets.forEach((raw, i) => {
    const { benchmark, settings } = testSetSettings(raw);
    const colon = benchmark.indexOf(":");
    const kindName = colon < 0 ? benchmark : benchmark.slice(0, colon);
    const source = colon < 0 ? null : String(resolveRelative(benchmark.slice(colon + 1), baseDir));
    const spec = source === null ? benchmark : `${kindName}:${source}`;
    let resolved;
    try {
      resolved = resolveBenchmark(spec);
    } catch (err) {
      throw new ExperimentFileError(`${file}: test_sets[${i}]: ${(err as Error).message}`);
    }
    if (FILE_BENCHMARKS.has(kindName) && source !== null && !existsSync(source)) {
      throw new ExperimentFileError(
        `${file}: test_sets[${i}]: ${benchmark}: no such file ${source} (relative paths start with ./ and are read from the experiment file's folder)`,
      );
    }
    const other = out.find((t) => t.name === resolved.name);
    if (other !== undefined) throw new ExperimentFileError(`${file}: test_sets[${i}]: ${benchmark} has the same name (${resolved.name}) as ${other.spec}`);
    const nll = resolved.kind === "nll";
    out.push({
      spec,
      name: resolved.name,
      kind: nll ? "nll" : "accuracy",
      metric: nll ? "nll" : "accuracy",
      higher_is_better: !nll,
      settings: { ...shared, ...settings },
    });
  });
  return out;
}

/** Checks the whole experiment against the recipes (nothing is trained or written). */
export async function planExperiment(experiment: Experiment, file: string, recipes: readonly RecipeEntry[]): Promise<ExperimentPlan> {
  const runs: PlannedRun[] = [];
  for (const draft of expandRuns(experiment, file)) {
    let recipe;
    try {
      recipe = await loadRecipe(recipes, draft.recipe);
    } catch (err) {
      throw new ExperimentFileError(`${file}: run "${draft.name}" (${draft.origin}): ${(err as Error).message}`);
    }
    const objectPaths = new Set(listObjectPaths(recipe.configSchema));
    const overrides = Object.assign({}, ...draft.layers.map((l) => flatten(l, objectPaths))) as Record<string, unknown>;
    const reserved = Object.keys(overrides).find((k) => RESERVED_KEYS.has(k));
    if (reserved !== undefined) {
      throw new ExperimentFileError(
        `${file}: run "${draft.name}" (${draft.origin}): ${reserved} is set by cookbook batch (runs go to <root>/<experiment>/<run>, resumed when they exist); remove it`,
      );
    }
    const args = Object.entries(overrides).map(([k, v]) => `${k}=${argText(v)}`);
    let config: Record<string, unknown>;
    try {
      config = parseConfigArgs(recipe.configSchema, args) as Record<string, unknown>;
    } catch (err) {
      throw new ExperimentFileError(`${file}: run "${draft.name}" (${draft.origin}, recipe ${draft.recipe}): ${(err as Error).message}`);
    }
    runs.push({ name: draft.name, recipe: recipe.name, overrides, args, config });
  }

  const models = [...new Set(runs.map((r) => r.config["model_name"]).filter((m): m is string => typeof m === "string"))];
  const baselines = experiment.baselines === true ? models : experiment.baselines === false ? [] : experiment.baselines;

  const urls = [...new Set(runs.map((r) => (typeof r.config["base_url"] === "string" ? r.config["base_url"] : null)))];
  let evalBaseUrl: string | null;
  if (experiment.eval.base_url !== undefined) evalBaseUrl = experiment.eval.base_url;
  else if (urls.length <= 1) evalBaseUrl = urls[0] ?? null;
  else
    throw new ExperimentFileError(
      `${file}: the runs train on different services (${urls.map((u) => u ?? "embedded").join(", ")}); their checkpoints cannot be compared in one evaluation — set eval.base_url or use one service`,
    );

  return {
    name: experiment.name,
    file,
    ...(experiment.description !== undefined ? { description: experiment.description } : {}),
    runs,
    baselines,
    testSets: planTestSets(experiment, file),
    evalBaseUrl,
    ...(experiment.key_metric !== undefined ? { keyMetric: experiment.key_metric } : {}),
  };
}
