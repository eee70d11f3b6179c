// The one checkpoint manager of every loop (docs/cookbook-parity.md#checkpoint-records): periodic saves (state + sampler weights,
// with a TTL), rolling resume points (state only, the superseded one deleted), the final save (no
// TTL, `final: true`) and saves on request. A save is queued first and recorded later, so a
// pipelined loop can queue it right after the step it contains and record it once that step's
// metrics row is written. A record is appended to checkpoints.jsonl only when every part of the
// save exists: a half-finished save is deleted again, never listed.
import { appendCheckpoint, checkpointName, type CheckpointRecord } from "../runs/checkpoints.ts";
import type { RestClient, TinkerFuture, TrainingClient } from "../tinker/clients.ts";
import type { SaveWeightsResponse } from "../tinker/types.ts";
import type { CheckpointPolicy } from "./config.ts";

export type SaveKind = "both" | "state";

export interface SavedPaths {
  state_path: string;
  sampler_path?: string;
}

export interface PendingSave {
  name: string;
  /** The loop's position to resume at (`batch`, `epoch`, ...), merged into the record. */
  loopState: Record<string, unknown>;
  rolling: boolean;
  final: boolean;
  state: TinkerFuture<SaveWeightsResponse>;
  sampler: TinkerFuture<SaveWeightsResponse> | null;
}

export interface CheckpointManagerOptions {
  logDir: string;
  /** Deletes superseded rolling points and the parts of failed saves; without it they expire. */
  restClient?: RestClient;
  log?: { info(message: string): void; warn(message: string): void };
}

export class CheckpointManager {
  private lastRollingPath: string | null = null;

  constructor(
    readonly trainingClient: TrainingClient,
    readonly policy: CheckpointPolicy,
    readonly options: CheckpointManagerOptions,
  ) {}

  isPeriodic(step: number): boolean {
    return step > 0 && this.policy.save_every > 0 && step % this.policy.save_every === 0;
  }

  /** A rolling point is due at this step (and no periodic save covers it). */
  isRolling(step: number): boolean {
    const every = this.policy.rolling_save_every;
    return step > 0 && every > 0 && step % every === 0 && !this.isPeriodic(step);
  }

  /** Queues the saves of one checkpoint (state first, then sampler weights) without awaiting them. */
  async enqueue(step: number | "final", loopState: Record<string, unknown>, flags: { kind?: SaveKind; rolling?: boolean } = {}): Promise<PendingSave> {
    const final = step === "final";
    const rolling = flags.rolling ?? false;
    const kind = flags.kind ?? (rolling ? "state" : "both");
    const name = final ? "final" : checkpointName(step);
    const ttl = final ? null : rolling ? this.policy.rolling_ttl_seconds : this.policy.ttl_seconds;
    const ttlOption = ttl === null ? {} : { ttlSeconds: ttl };
    // Names are reused when a resumed run passes the same step again.
    const state = await this.trainingClient.saveState(name, { ...ttlOption, overwrite: true });
    const sampler = kind === "both" ? await this.trainingClient.saveWeightsForSampler(name, ttlOption) : null;
    return { name, loopState, rolling, final, state, sampler };
  }

  /** Waits for a queued save and appends its record; a save with a failed part is removed and rethrown. */
  async record(save: PendingSave, settled?: SavedPaths): Promise<SavedPaths> {
    const paths = settled ?? (await this.wait(save));
    const record: CheckpointRecord = { name: save.name, ...save.loopState, ...paths };
    if (save.final) record.final = true;
    if (save.rolling) record.rolling = true;
    appendCheckpoint(this.options.logDir, record);
    await this.supersedeRolling(save.rolling ? paths.state_path : null);
    return paths;
  }

  async save(step: number | "final", loopState: Record<string, unknown>, flags: { kind?: SaveKind; rolling?: boolean } = {}): Promise<SavedPaths> {
    return this.record(await this.enqueue(step, loopState, flags));
  }

  /** A rolling resume point; a failure is logged, not fatal (the next point or periodic save covers it). */
  async saveRolling(step: number, loopState: Record<string, unknown>): Promise<void> {
    try {
      await this.save(step, loopState, { rolling: true });
    } catch (err) {
      this.options.log?.warn(`rolling checkpoint at step ${step} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async saveFinal(loopState: Record<string, unknown>): Promise<SavedPaths> {
    return this.save("final", loopState);
  }

  /** The paths of a queued save once every part exists; a save with a failed part is removed and rethrown. */
  async wait(save: PendingSave): Promise<SavedPaths> {
    const results = await Promise.allSettled([save.state.result(), save.sampler?.result() ?? Promise.resolve(null)]);
    const [state, sampler] = results;
    if (state.status === "fulfilled" && sampler.status === "fulfilled") {
      const paths: SavedPaths = { state_path: state.value.path };
      if (sampler.value !== null) paths.sampler_path = sampler.value.path;
      return paths;
    }
    // All or nothing: the part that did save is removed so no unlisted half checkpoint stays behind.
    for (const part of results) {
      if (part.status === "fulfilled" && part.value !== null) await this.deleteQuietly(part.value.path);
    }
    const reason = state.status === "rejected" ? state.reason : sampler.status === "rejected" ? sampler.reason : undefined;
    // The engine's errors already name the checkpoint (and, for a full disk, the step and the free
    // space): pass them on as they are.
    if (reason instanceof Error) throw reason;
    throw new Error(`checkpoint ${save.name} (${JSON.stringify(save.loopState)}) was not saved: ${String(reason)}`);
  }

  /** Deletes the previous rolling point once a newer resumable record exists. */
  private async supersedeRolling(newRollingPath: string | null): Promise<void> {
    const previous = this.lastRollingPath;
    this.lastRollingPath = newRollingPath;
    if (previous !== null && previous !== newRollingPath) await this.deleteQuietly(previous);
  }

  private async deleteQuietly(path: string): Promise<void> {
    if (this.options.restClient === undefined) return;
    try {
      await this.options.restClient.deleteCheckpointFromTinkerPath(path);
    } catch (err) {
      this.options.log?.warn(`could not delete checkpoint ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
