// An experiment's runs before any recipe is consulted: the listed runs and the grid expanded to
// one run per combination of model × dataset × values, each with readable, deterministic name
// (`tiny-chat__persona__learning_rate-0.01`) and its override layers in the order they apply.
import { basename, dirname, extname, isAbsolute, resolve } from "node:path";
import { ExperimentFileError, type AxisEntry, type Experiment } from "./schema.ts";

export interface RunDraft {
  name: string;
  recipe: string;
  /** Override layers, later ones win: defaults, then grid/run overrides, model, dataset, values. */
  layers: Record<string, unknown>[];
  /** Where the run came from, for error messages: `runs[2]` or `grid (model tiny-chat, dataset persona)`. */
  origin: string;
}

/** Separates the parts of a grid run's name (model, dataset, key-value). */
export const NAME_SEPARATOR = "__";

/** Folder-safe text for a name part. */
export function slug(text: string): string {
  const s = text.replace(/[^A-Za-z0-9_.+=-]+/g, "_").replace(/^[^A-Za-z0-9]+/, "");
  return s.length > 0 ? s.slice(0, 60) : "x";
}

/** A value as it appears in a run name: numbers and words as written, paths by their stem. */
export function valueSlug(value: unknown): string {
  if (typeof value === "string") return slug(value.includes("/") ? basename(value, extname(value)) : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return slug(JSON.stringify(value) ?? "undefined");
}

/** String values starting with ./ or ../ are paths relative to the experiment file. */
export function resolveRelative(value: unknown, baseDir: string): unknown {
  return typeof value === "string" && /^\.\.?\//.test(value) ? resolve(baseDir, value) : value;
}

function resolveLayer(layer: Record<string, unknown>, baseDir: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(layer).map(([k, v]) => [k, resolveRelative(v, baseDir)]));
}

function axis(entries: readonly AxisEntry[] | undefined, key: string, baseDir: string): { name: string; overrides: Record<string, unknown> }[] | undefined {
  return entries?.map((e) =>
    typeof e === "string"
      ? { name: valueSlug(e), overrides: { [key]: resolveRelative(e, baseDir) } }
      : { name: e.name, overrides: resolveLayer(e.overrides, baseDir) },
  );
}

/** Every combination of the lists, the first list outermost. */
function cartesian<T>(lists: readonly T[][]): T[][] {
  return lists.reduce<T[][]>((acc, list) => acc.flatMap((prefix) => list.map((item) => [...prefix, item])), [[]]);
}

/** The runs of an experiment in order (listed runs, then the grid), with their names checked unique. */
export function expandRuns(experiment: Experiment, file: string): RunDraft[] {
  const baseDir = isAbsolute(file) ? dirname(file) : resolve(dirname(file));
  const defaults = resolveLayer(experiment.defaults, baseDir);
  const drafts: RunDraft[] = experiment.runs.map((r, i) => ({
    name: r.name ?? `${r.recipe}_${i + 1}`,
    recipe: r.recipe,
    layers: [defaults, resolveLayer(r.overrides, baseDir)],
    origin: `runs[${i}]`,
  }));
  const grid = experiment.grid;
  if (grid !== undefined) {
    const models = axis(grid.models, "model_name", baseDir);
    const datasets = axis(grid.datasets, "dataset", baseDir);
    const valueAxes = Object.entries(grid.values).map(([key, values]) =>
      values.map((v) => ({ name: `${key.split(".").pop()!}-${valueSlug(v)}`, overrides: { [key]: resolveRelative(v, baseDir) } })),
    );
    const axes = [...(models ? [models] : []), ...(datasets ? [datasets] : []), ...valueAxes];
    for (const combo of cartesian(axes)) {
      drafts.push({
        name: combo.length > 0 ? combo.map((c) => c.name).join(NAME_SEPARATOR) : grid.recipe,
        recipe: grid.recipe,
        layers: [defaults, resolveLayer(grid.overrides, baseDir), ...combo.map((c) => c.overrides)],
        origin: `grid (${combo.map((c) => c.name).join(", ") || "no axes"})`,
      });
    }
  }
  const seen = new Map<string, string>();
  for (const d of drafts) {
    const other = seen.get(d.name);
    if (other !== undefined)
      throw new ExperimentFileError(`${file}: two runs are named "${d.name}" (${other} and ${d.origin}); give the runs or grid entries distinct names`);
    seen.set(d.name, d.origin);
  }
  return drafts;
}
