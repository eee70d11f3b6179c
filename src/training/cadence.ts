// The step skeleton every training loop shares (SL, RL, DPO, SDFT and the distillation loops on
// top of them): at each boundary between two steps, one decision of what to save and whether to
// stop; one seed per epoch for the data order; one rule for the evaluation of the final weights;
// one result shape. The loops differ in what a step is (pipelined SL, sampled RL, DPO's pairs),
// never in when they save or stop.
//
// The rules (docs/architecture.md#the-step-skeleton):
// - A boundary is "before step `next`"; `next` counts the steps trained. The last boundary
//   (`next` = end) decides nothing: the final evaluation and the final checkpoint follow.
// - A full checkpoint (state + sampler weights) is due on a periodic step, on request (SIGUSR1),
//   when a stop was requested (SIGINT), or when `save_every_tokens` / `save_every_seconds` of
//   training went by since the last full save; otherwise a state-only rolling point may be due.
// - A stop is honoured at the first boundary after it was requested, after that boundary's save,
//   so the run resumes exactly at `next`.
import { performance } from "node:perf_hooks";
import type { RunControl } from "../runs/control.ts";
import { StepTimer } from "../log/timing.ts";
import type { CheckpointManager } from "./checkpoints.ts";
import type { TrainingOutcome, TrainingContext } from "./run.ts";

/** Why a full checkpoint is due at a boundary. */
export type SaveReason = "periodic" | "requested" | "stop" | "tokens" | "seconds";

export interface Boundary {
  /** The step about to start (= the steps trained so far). */
  next: number;
  /** What to save before `next`: a full checkpoint, a state-only rolling point, or nothing. */
  save: "full" | "rolling" | null;
  /** Set when `save` is "full"; a periodic save may be made by the loop itself (RL saves the sampler it samples with). */
  reason: SaveReason | null;
  stop: boolean;
}

/** Loops that count trained tokens can also save every so many tokens or seconds (0 = off). */
export interface ExtraSaveTriggers {
  save_every_tokens?: number;
  save_every_seconds?: number;
}

export class StepCadence {
  private tokensAtLastSave: number;
  private timeAtLastSave = performance.now();

  constructor(
    readonly checkpoints: CheckpointManager,
    readonly control: RunControl,
    readonly endStep: number,
    readonly triggers: ExtraSaveTriggers = {},
    elapsedTokens = 0,
  ) {
    this.tokensAtLastSave = elapsedTokens;
  }

  /** The decision at the boundary before step `next`; consumes a pending checkpoint request. */
  decide(next: number, elapsedTokens = 0): Boundary {
    if (next >= this.endStep) return { next, save: null, reason: null, stop: false };
    const stop = this.control.stopRequested;
    const reason = this.fullSaveReason(next, elapsedTokens, stop);
    if (reason !== null) return { next, save: "full", reason, stop };
    return { next, save: this.checkpoints.isRolling(next) ? "rolling" : null, reason: null, stop };
  }

  /** A periodic checkpoint is due before step `next` (never at the end: the final checkpoint is made there). */
  periodicAt(next: number): boolean {
    return next < this.endStep && this.checkpoints.isPeriodic(next);
  }

  /** Restarts the token and time counters; call when a full checkpoint was queued. */
  savedAt(elapsedTokens: number): void {
    this.tokensAtLastSave = elapsedTokens;
    this.timeAtLastSave = performance.now();
  }

  /** A stop requested before the first step: nothing trained, so nothing to save. */
  get stopRequested(): boolean {
    return this.control.stopRequested;
  }

  private fullSaveReason(next: number, elapsedTokens: number, stop: boolean): SaveReason | null {
    // The request is consumed first so that a SIGUSR1 never lingers into a later boundary.
    const requested = this.control.consumeCheckpointRequest();
    if (this.periodicAt(next)) return "periodic";
    if (requested) return "requested";
    if (stop) return "stop";
    const { save_every_tokens: everyTokens = 0, save_every_seconds: everySeconds = 0 } = this.triggers;
    if (everyTokens > 0 && elapsedTokens - this.tokensAtLastSave >= everyTokens) return "tokens";
    if (everySeconds > 0 && (performance.now() - this.timeAtLastSave) / 1000 >= everySeconds) return "seconds";
    return null;
  }
}

/** What every loop returns. */
export interface LoopResult {
  /** The first step of this invocation (after a resume, the step it resumed at). */
  startStep: number;
  /** The step the run ends at when nothing stops it. */
  endStep: number;
  /** The first step not trained (endStep unless stopped, or async RL ran out of fresh groups). */
  stoppedAt: number;
  /** "exit" when the person chose exit at the log-dir prompt: nothing ran. */
  outcome: TrainingOutcome;
}

/** The result of a body that never trained (the person chose exit at the log-dir prompt). */
export const EXITED: LoopResult = { startStep: 0, endStep: 0, stoppedAt: 0, outcome: "exit" };

/** The seed of an epoch's data order: the run's seed moves every epoch's order, the epoch moves it again. */
export function epochSeed(runSeed: number, epoch: number): number {
  return runSeed + epoch;
}

/**
 * The final weights are scored once more, at step `endStep`, in every loop that has evaluators and
 * evaluates at all (the loop's own evaluations run before a step trains, so the last trained weights
 * would otherwise never be scored).
 */
export function finalEvaluationDue(evalEvery: number, evaluatorCount: number): boolean {
  return evalEvery > 0 && evaluatorCount > 0;
}

/** A loop whose steps run one after another (DPO, SDFT): what differs from loop to loop. */
export interface SynchronousSteps {
  run: TrainingContext;
  checkpoints: CheckpointManager;
  startStep: number;
  endStep: number;
  /** What a checkpoint before step `step` records: the position to resume at, and what the loop pinned. */
  loopState(step: number): Record<string, unknown>;
  /** Trains step `step` (running the evaluations due before it) and returns its metrics row. */
  step(step: number, timer: StepTimer): Promise<Record<string, number>>;
  /** Scores the final weights; null when finalEvaluationDue says no. */
  finalEvaluation: (() => Promise<Record<string, number>>) | null;
}

/** The step skeleton for synchronous loops: boundaries, final evaluation and final checkpoint. */
export async function runSynchronousSteps(loop: SynchronousSteps): Promise<LoopResult> {
  const { run, checkpoints, startStep, endStep } = loop;
  if (startStep >= endStep) {
    run.log.info("training was already complete; nothing to do");
    return { startStep, endStep, stoppedAt: startStep, outcome: "already_complete" };
  }
  const cadence = new StepCadence(checkpoints, run.control, endStep);
  if (cadence.stopRequested) return { startStep, endStep, stoppedAt: startStep, outcome: "stopped" };
  for (let step = startStep; step < endStep; step++) {
    const timer = new StepTimer();
    const metrics = await loop.step(step, timer);
    const boundary = cadence.decide(step + 1);
    await saveAtBoundary(cadence, boundary, loop.loopState(boundary.next), timer, run.log);
    run.metrics.logStep(metrics, step, timer);
    if (boundary.stop) {
      run.log.info(`stopped before step ${boundary.next}; resume with behavior_if_log_dir_exists=resume`);
      return { startStep, endStep, stoppedAt: boundary.next, outcome: "stopped" };
    }
  }
  if (loop.finalEvaluation !== null) run.metrics.logMetrics(await loop.finalEvaluation(), endStep);
  await checkpoints.saveFinal(loop.loopState(endStep));
  run.log.info("training completed");
  return { startStep, endStep, stoppedAt: endStep, outcome: "completed" };
}

/** Makes the save a boundary decided on (a loop that saved periodically itself passes `skipPeriodic`). */
export async function saveAtBoundary(
  cadence: StepCadence,
  boundary: Boundary,
  loopState: Record<string, unknown>,
  timer: StepTimer,
  log: { info(message: string): void },
  options: { skipPeriodic?: boolean; elapsedTokens?: number } = {},
): Promise<void> {
  if (boundary.save === "rolling") {
    await cadence.checkpoints.saveRolling(boundary.next, loopState);
    return;
  }
  if (boundary.save !== "full") return;
  cadence.savedAt(options.elapsedTokens ?? 0);
  if (boundary.reason === "periodic" && options.skipPeriodic === true) return;
  await timer.span("save_checkpoint", () => cadence.checkpoints.save(boundary.next, loopState));
  if (boundary.reason === "requested" || boundary.reason === "stop")
    log.info(`checkpoint before step ${boundary.next} saved (${boundary.reason === "stop" ? "stop" : "SIGUSR1"})`);
}
