// Saving RL checkpoints and recording them in checkpoints.jsonl (spec §7.3): periodic saves
// (state + sampler, with a TTL), rolling resume points (state only, previous one deleted) and
// the final save (no TTL, marked `final: true`).
import { appendCheckpoint, checkpointName, type CheckpointRecord } from "../runs/checkpoints.ts";
import type { RestClient, TrainingClient } from "../tinker/clients.ts";

export type CheckpointKind = "state" | "sampler" | "both";

export interface SavedPaths {
  state_path?: string;
  sampler_path?: string;
}

/** Enqueues both saves before awaiting either, then appends the record. */
export async function saveCheckpoint(
  trainingClient: TrainingClient,
  args: { logPath: string; name: string; loopState: Record<string, unknown>; kind: CheckpointKind; ttlSeconds: number | null; extra?: Record<string, unknown> },
): Promise<SavedPaths> {
  const ttl = args.ttlSeconds === null ? {} : { ttlSeconds: args.ttlSeconds };
  const stateFuture = args.kind !== "sampler" ? await trainingClient.saveState(args.name, ttl) : null;
  const samplerFuture = args.kind !== "state" ? await trainingClient.saveWeightsForSampler(args.name, ttl) : null;
  const paths: SavedPaths = {};
  if (stateFuture !== null) paths.state_path = (await stateFuture.result()).path;
  if (samplerFuture !== null) paths.sampler_path = (await samplerFuture.result()).path;
  const record: CheckpointRecord = { name: args.name, ...args.loopState, ...paths, ...(args.extra ?? {}) };
  appendCheckpoint(args.logPath, record);
  return paths;
}

export interface CheckpointManagerOptions {
  logPath: string;
  saveEvery: number;
  ttlSeconds: number | null;
  rollingSaveEvery: number;
  rollingTtlSeconds: number;
  /** For deleting superseded rolling checkpoints; without it they simply expire. */
  restClient?: RestClient;
  log?: (message: string) => void;
}

export class CheckpointManager {
  private lastRollingPath: string | null = null;

  constructor(
    readonly trainingClient: TrainingClient,
    readonly options: CheckpointManagerOptions,
  ) {}

  shouldSavePeriodic(step: number): boolean {
    return step > 0 && this.options.saveEvery > 0 && step % this.options.saveEvery === 0;
  }

  async savePeriodic(step: number, loopState: Record<string, unknown>): Promise<SavedPaths> {
    return saveCheckpoint(this.trainingClient, {
      logPath: this.options.logPath,
      name: checkpointName(step),
      loopState,
      kind: "both",
      ttlSeconds: this.options.ttlSeconds,
    });
  }

  async maybeSaveRolling(step: number, loopState: Record<string, unknown>): Promise<void> {
    const every = this.options.rollingSaveEvery;
    if (every <= 0 || step <= 0 || step % every !== 0 || this.shouldSavePeriodic(step)) return;
    // A failed resume point must not end the run: the next one (or a periodic save) covers it.
    try {
      const paths = await saveCheckpoint(this.trainingClient, {
        logPath: this.options.logPath,
        name: checkpointName(step),
        loopState,
        kind: "state",
        ttlSeconds: this.options.rollingTtlSeconds,
        extra: { rolling: true },
      });
      await this.deleteLastRolling();
      this.lastRollingPath = paths.state_path ?? null;
    } catch (err) {
      this.options.log?.(`rolling checkpoint at step ${step} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async deleteLastRolling(): Promise<void> {
    const previous = this.lastRollingPath;
    this.lastRollingPath = null;
    if (previous === null || this.options.restClient === undefined) return;
    try {
      await this.options.restClient.deleteCheckpointFromTinkerPath(previous);
    } catch (err) {
      this.options.log?.(`could not delete superseded rolling checkpoint ${previous}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async saveFinal(loopState: Record<string, unknown>): Promise<SavedPaths> {
    const paths = await saveCheckpoint(this.trainingClient, {
      logPath: this.options.logPath,
      name: "final",
      loopState,
      kind: "both",
      ttlSeconds: null,
      extra: { final: true },
    });
    await this.deleteLastRolling();
    return paths;
  }
}
