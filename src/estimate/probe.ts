// What a run will cost before it is launched, measured rather than guessed: the recipe runs with
// the same config in a scratch directory for a few steps (its own loop, model and data on this
// machine), and its metrics give the time per step, the tokens per step and — from `progress`,
// which every loop logs as the fraction of the run done — the number of steps. The estimate is
// start-up + steps × the median step time after the first (which carries warm-up and step-0
// evaluation). For a remote service the tokens are priced from an editable table.
import { readFileSync } from "node:fs";
import type { MetricsRecord } from "../log/metrics.ts";

/** Keys holding the fraction of the run done after a step, first present wins. */
const PROGRESS_KEYS = ["progress", "progress/done_frac"] as const;
/** Keys holding a step's duration in seconds, first present wins. */
const STEP_TIME_KEYS = ["time/total", "time/step"] as const;
/** Keys holding a step's tokens (sampled and scored), summed when several are present. */
const TOKEN_KEYS = [["num_tokens"], ["env/all/total_ac_tokens", "env/all/total_ob_tokens"]] as const;

export interface ProbeMeasurement {
  /** Seconds from starting the process to its first metrics row being written. */
  firstRowSeconds: number;
  rows: MetricsRecord[];
  /** Seconds from the start at which each row was first seen (wall clock: pipelined loops overlap steps). */
  rowSeconds?: number[];
  /** Set when the whole run ended within the probe: seconds from start to its exit. */
  finishedSeconds?: number;
}

export interface RunEstimate {
  steps: number | null;
  stepSeconds: number | null;
  tokensPerStep: number | null;
  totalTokens: number | null;
  wallSeconds: number | null;
  /** Steps the probe measured (its rows). */
  probedSteps: number;
  costUsd?: number;
  notes: string[];
}

const num = (r: MetricsRecord, k: string): number | undefined => (typeof r[k] === "number" && Number.isFinite(r[k]) ? (r[k] as number) : undefined);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface EstimateOptions {
  /** The config's eval_every: evaluations after the probed steps (and the final one) are added. */
  evalEvery?: number;
}

/**
 * Seconds of the evaluations still to come after the probed rows: the loop evaluates every
 * `evalEvery` steps and once more at the end, each taking about what `time/evals` measured. When
 * the probe's paced rows already held an evaluation, the pace includes them and only the final one is added.
 */
function laterEvaluations(
  rows: readonly MetricsRecord[],
  steps: number,
  evalEvery: number | undefined,
): { seconds: number; count: number; each: number } | null {
  const evalRows = rows.filter((r) => num(r, "time/evals") !== undefined);
  if (evalEvery === undefined || evalEvery <= 0 || evalRows.length === 0) return null;
  const each = median(evalRows.map((r) => num(r, "time/evals")!));
  const lastProbed = Math.max(...rows.map((r) => r.step));
  const pacedHasEval = evalRows.some((r) => r.step > rows[0]!.step);
  let count = 1;
  if (!pacedHasEval) for (let s = lastProbed + 1; s < steps; s++) if (s % evalEvery === 0) count += 1;
  return { seconds: count * each, count, each };
}

export function estimateFromProbe(probe: ProbeMeasurement, options: EstimateOptions = {}): RunEstimate {
  const notes: string[] = [];
  const rows = probe.rows.filter((r) => typeof r.step === "number");
  const progressKey = PROGRESS_KEYS.find((k) => rows.some((r) => num(r, k) !== undefined));
  let steps: number | null = null;
  if (progressKey !== undefined) {
    const last = [...rows].reverse().find((r) => num(r, progressKey) !== undefined)!;
    const p = num(last, progressKey)!;
    if (p > 0) steps = Math.round((last.step + 1) / p);
  } else notes.push("the loop logs no progress fraction: the number of steps is unknown");
  const stepKey = STEP_TIME_KEYS.find((k) => rows.some((r) => num(r, k) !== undefined));
  const times = stepKey === undefined ? [] : rows.map((r) => num(r, stepKey)).filter((t): t is number => t !== undefined);
  const steady = times.length > 1 ? times.slice(1) : times;
  // The pace on the wall clock between the second row and the last: what a pipelined loop, whose
  // steps overlap, really takes per step. Without arrival times, the loop's own step durations.
  const seen = probe.rowSeconds ?? [];
  const paced = seen.length >= 3 && seen[seen.length - 1]! > seen[1]! ? (seen[seen.length - 1]! - seen[1]!) / (seen.length - 2) : undefined;
  const stepSeconds = paced ?? (steady.length > 0 ? median(steady) : null);
  const tokenKeys = TOKEN_KEYS.find((keys) => rows.some((r) => keys.every((k) => num(r, k) !== undefined)));
  const tokens = tokenKeys === undefined ? [] : rows.map((r) => tokenKeys.reduce((s, k) => s + (num(r, k) ?? 0), 0));
  const tokensPerStep = tokens.length > 0 ? median(tokens) : null;
  // The first step's own time is inside firstRowSeconds; the rest of it is start-up.
  const startup = Math.max(0, probe.firstRowSeconds - (times[0] ?? 0));
  // A run that ended within the probe is its own measurement.
  const evals = probe.finishedSeconds === undefined && steps !== null ? laterEvaluations(rows, steps, options.evalEvery) : null;
  const wallSeconds =
    probe.finishedSeconds !== undefined
      ? probe.finishedSeconds
      : steps !== null && stepSeconds !== null
        ? startup + (times[0] ?? stepSeconds) + Math.max(0, steps - 1) * stepSeconds + (evals?.seconds ?? 0)
        : null;
  if (evals !== null)
    notes.push(
      `includes ${evals.count} later evaluation${evals.count === 1 ? "" : "s"} (eval_every ${options.evalEvery}, and the last) of ${evals.each.toFixed(2)} s each, as measured at step 0`,
    );
  else if (probe.finishedSeconds === undefined && rows.some((r) => Object.keys(r).some((k) => k.startsWith("test/"))))
    notes.push("evaluations recur during the run; their time is in the steps that run them, sampled only at step 0 here");
  return {
    steps,
    stepSeconds,
    tokensPerStep,
    totalTokens: steps !== null && tokensPerStep !== null ? steps * tokensPerStep : null,
    wallSeconds,
    probedSteps: rows.length,
    notes,
  };
}

/** USD per million tokens, by model name (`*` for any other); the user's file replaces the default. */
export type PriceTable = Record<string, number>;

export const DEFAULT_PRICES: PriceTable = { "*": 0.4 };

export function readPriceTable(path: string | undefined): PriceTable {
  if (path === undefined) return DEFAULT_PRICES;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`price table ${path}: ${(err as Error).message}; expected JSON {"<model name>": <USD per million tokens>, "*": <default>}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new Error(`price table ${path}: expected an object of model name → USD per million tokens`);
  const out: PriceTable = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== "number" || !(v >= 0))
      throw new Error(`price table ${path}: key "${k}" must be a non-negative number (USD per million tokens), got ${JSON.stringify(v)}`);
    out[k] = v;
  }
  return out;
}

export function priceFor(table: PriceTable, model: string): number | undefined {
  return table[model] ?? table["*"];
}

export function formatEstimate(e: RunEstimate, recipe: string): string {
  const fmtS = (s: number): string => (s < 90 ? `${s.toFixed(0)} s` : s < 5400 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(1)} h`);
  const lines = [`estimate for ${recipe} (measured: ${e.probedSteps} step${e.probedSteps === 1 ? "" : "s"} of this config on this machine)`];
  lines.push(`  steps            ${e.steps ?? "unknown"}`);
  lines.push(`  time per step    ${e.stepSeconds === null ? "unknown" : `${e.stepSeconds.toFixed(2)} s`}`);
  lines.push(
    `  tokens per step  ${e.tokensPerStep === null ? "unknown" : Math.round(e.tokensPerStep)}${e.totalTokens !== null ? `  (${Math.round(e.totalTokens)} in all)` : ""}`,
  );
  lines.push(`  expected wall    ${e.wallSeconds === null ? "unknown" : fmtS(e.wallSeconds)}`);
  if (e.costUsd !== undefined) lines.push(`  expected cost    $${e.costUsd.toFixed(2)} (price table)`);
  for (const n of e.notes) lines.push(`  note: ${n}`);
  return lines.join("\n");
}
