// `cookbook batch --dry-run`: what the batch will take, measured rather than guessed. Each run
// still to train is probed with `cookbook run … --dry-run`'s probe (a few steps of that exact
// config in a scratch directory: steps, tokens, time per step, start-up), and the evaluation is
// timed on one model — every test set in full, into a scratch store — then scaled by the number of
// models. Remote runs are priced from the price table.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureEstimate } from "../estimate/estimateRun.ts";
import type { RunEstimate } from "../estimate/probe.ts";
import { evaluateModel } from "../eval/session.ts";
import { EvalStore } from "../eval/store.ts";
import type { ServiceClient } from "../tinker/clients.ts";
import { runFinished } from "./childRun.ts";
import type { ExperimentPlan } from "./plan.ts";

export interface RunEstimateRow {
  name: string;
  recipe: string;
  /** null: already finished, nothing to train. */
  estimate: RunEstimate | null;
}

export interface BatchEstimate {
  runs: RunEstimateRow[];
  /** Seconds to load and check the experiment before the first run starts. */
  startupSeconds: number;
  trainSeconds: number | null;
  trainTokens: number | null;
  costUsd: number | null;
  /** Seconds of one model's evaluation on every test set: a base model, and a checkpoint of one. */
  evaluation: { baselines: number; runs: number; testSets: number; measuredOn: string; baseSeconds: number; runSeconds: number; seconds: number } | null;
  totalSeconds: number | null;
  parallel: number;
  notes: string[];
}

export interface EstimateBatchOptions {
  root: string;
  runDir: (name: string) => string;
  train: boolean;
  eval: boolean;
  parallel: number;
  prices?: string;
  /** Opens the service the evaluation probe samples on, with its checkpoint store in `storeDir` (a scratch folder). */
  openService: (storeDir: string) => Promise<ServiceClient>;
  startupSeconds: number;
  onProgress?: (message: string) => void;
}

const sum = (xs: readonly (number | null)[]): number | null => (xs.some((x) => x === null) ? null : xs.reduce<number>((a, x) => a + x!, 0));

/** Times one model's evaluation on every test set (each in full, as the batch will run it). */
async function timeEvaluation(plan: ExperimentPlan, model: string, service: ServiceClient): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), "cookbook-batch-estimate-"));
  try {
    const t0 = performance.now();
    for (const t of plan.testSets)
      await evaluateModel({ model, benchmarks: [t.spec], overrides: t.settings, service, store: new EvalStore(scratch), resume: false });
    return (performance.now() - t0) / 1000;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A LoRA sampler checkpoint like the runs will leave (same model and rank, untrained), saved in
 * the probe's own scratch store: a checkpoint samples more slowly than its base model.
 */
async function scratchCheckpoint(service: ServiceClient, model: string, rank: number | undefined): Promise<string> {
  const training = await service.createLoraTrainingClient(model, rank !== undefined ? { rank } : {});
  const saved = await (await training.saveWeightsForSampler("estimate")).result();
  return saved.path;
}

/** The runs' own notes once each; the per-run count of later evaluations as one line. */
function runNotes(estimates: readonly RunEstimate[]): string[] {
  const all = estimates.flatMap((e) => e.notes);
  const laterEvals = all.filter((n) => n.startsWith("includes ") && n.includes("later evaluation"));
  const rest = [...new Set(all.filter((n) => !laterEvals.includes(n)))];
  return laterEvals.length > 0
    ? [`each run's time includes its evaluations still to come (every eval_every steps and the last), timed as at its step 0`, ...rest]
    : rest;
}

export async function estimateBatch(plan: ExperimentPlan, options: EstimateBatchOptions): Promise<BatchEstimate> {
  const notes: string[] = [];
  const runs: RunEstimateRow[] = [];
  for (const run of plan.runs) {
    if (runFinished(options.runDir(run.name)) || !options.train) {
      runs.push({ name: run.name, recipe: run.recipe, estimate: null });
      continue;
    }
    options.onProgress?.(`${run.name}: measuring a few steps of ${run.recipe}…`);
    runs.push({ name: run.name, recipe: run.recipe, estimate: await measureEstimate(run.recipe, run.args, run.config, { prices: options.prices }) });
  }
  const toTrain = runs.filter((r) => r.estimate !== null).map((r) => r.estimate!);
  const trainSeconds = sum(toTrain.map((e) => e.wallSeconds));
  const trainTokens = sum(toTrain.map((e) => e.totalTokens));
  const costs = toTrain.map((e) => e.costUsd).filter((c): c is number => c !== undefined);
  if (options.parallel > 1 && toTrain.length > 1)
    notes.push(
      `parallel=${options.parallel}: runs share this machine's cores, so the batch takes between the sum ÷ ${options.parallel} and the sum; the sum is shown`,
    );

  let evaluation: BatchEstimate["evaluation"] = null;
  const firstRun = plan.runs[0];
  const baseline = plan.baselines[0] ?? (typeof firstRun?.config["model_name"] === "string" ? (firstRun.config["model_name"] as string) : undefined);
  if (options.eval && plan.testSets.length > 0 && baseline !== undefined) {
    options.onProgress?.(`evaluation: timing ${baseline} and a checkpoint of it on ${plan.testSets.map((t) => t.name).join(", ")}…`);
    const storeDir = mkdtempSync(join(tmpdir(), "cookbook-batch-estimate-store-"));
    const service = await options.openService(storeDir);
    try {
      const baseSeconds = await timeEvaluation(plan, baseline, service);
      let runSeconds = baseSeconds;
      if (firstRun !== undefined && typeof firstRun.config["model_name"] === "string") {
        const rank = typeof firstRun.config["lora_rank"] === "number" ? firstRun.config["lora_rank"] : undefined;
        runSeconds = await timeEvaluation(plan, await scratchCheckpoint(service, firstRun.config["model_name"], rank), service);
      }
      const seconds = plan.baselines.length * baseSeconds + plan.runs.length * runSeconds;
      evaluation = {
        baselines: plan.baselines.length,
        runs: plan.runs.length,
        testSets: plan.testSets.length,
        measuredOn: baseline,
        baseSeconds,
        runSeconds,
        seconds,
      };
    } finally {
      await service.close();
      rmSync(storeDir, { recursive: true, force: true });
    }
    if (plan.evalBaseUrl !== null) notes.push("the evaluation was timed on the embedded engine; on the service it will differ");
  }
  const parts = [options.startupSeconds, trainSeconds ?? 0, evaluation?.seconds ?? 0];
  return {
    runs,
    startupSeconds: options.startupSeconds,
    trainSeconds,
    trainTokens,
    costUsd: costs.length > 0 ? costs.reduce((a, c) => a + c, 0) : null,
    evaluation,
    totalSeconds: trainSeconds === null && toTrain.length > 0 ? null : parts.reduce((a, x) => a + x, 0),
    parallel: options.parallel,
    notes: [...notes, ...runNotes(toTrain)],
  };
}

function seconds(s: number | null): string {
  if (s === null) return "unknown";
  return s < 90 ? `${s.toFixed(0)} s` : s < 5400 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(1)} h`;
}

export function formatBatchEstimate(plan: ExperimentPlan, e: BatchEstimate): string {
  const rows = e.runs.map((r) => {
    const x = r.estimate;
    if (x === null) return [r.name, r.recipe, "—", "—", "—", "finished", ""];
    return [
      r.name,
      r.recipe,
      String(x.steps ?? "?"),
      x.stepSeconds === null ? "?" : x.stepSeconds.toFixed(2),
      x.totalTokens === null ? "?" : String(Math.round(x.totalTokens)),
      seconds(x.wallSeconds),
      x.costUsd !== undefined ? `$${x.costUsd.toFixed(2)}` : "",
    ];
  });
  const header = ["run", "recipe", "steps", "s/step", "tokens", "wall", "cost"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  const out = [
    `estimate for experiment ${plan.name} (${plan.runs.length} runs, ${plan.baselines.length} baselines, ${plan.testSets.length} test sets; measured on this machine)`,
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
    "",
  ];
  out.push(`  start-up          ${seconds(e.startupSeconds)}`);
  out.push(`  training          ${seconds(e.trainSeconds)}${e.trainTokens !== null ? `  (${Math.round(e.trainTokens)} tokens)` : ""}`);
  if (e.evaluation !== null) {
    const v = e.evaluation;
    out.push(
      `  evaluation        ${seconds(v.seconds)}  (${v.testSets} test sets: ${v.baselines} baselines × ${v.baseSeconds.toFixed(1)} s + ${v.runs} runs × ${v.runSeconds.toFixed(1)} s, measured on ${v.measuredOn} and a checkpoint of it)`,
    );
  }
  out.push(`  expected wall     ${seconds(e.totalSeconds)}`);
  if (e.costUsd !== null) out.push(`  expected cost     $${e.costUsd.toFixed(2)} (training tokens, price table)`);
  for (const n of e.notes) out.push(`  note: ${n}`);
  return out.join("\n");
}
