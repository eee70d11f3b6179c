// Staleness control for async off-policy RL (docs/cookbook-parity.md#rl-config-and-modes): every group remembers the training
// step of the sampler that produced it; a group more than `maxStepsOffPolicy` steps behind is
// not trained on — its builder goes back for resampling, or is dropped once the dataloader has
// run out (nothing would consume it any more).
import type { EnvGroupBuilder, TrajectoryGroup } from "./types.ts";

export interface StampedGroup {
  group: TrajectoryGroup;
  builder: EnvGroupBuilder;
  /** Training step whose weights the sampler held. */
  samplingClientStep: number;
  samplingTimeSeconds: number;
}

export type OffPolicyVerdict = "accepted" | "requeued" | "discarded";

export interface OffPolicyBatcherOptions {
  maxStepsOffPolicy: number;
  groupsPerBatch: number;
  /** Sends a stale group's builder back to the rollout workers. */
  requeue: (builder: EnvGroupBuilder) => void;
  /** True once no more data will be produced. */
  dataExhausted: () => boolean;
}

export class OffPolicyBatcher {
  private pending: StampedGroup[] = [];
  readonly counts = { accepted: 0, requeued: 0, discarded: 0 };

  constructor(private readonly options: OffPolicyBatcherOptions) {
    if (options.groupsPerBatch <= 0) throw new Error(`groups_per_batch must be positive, got ${options.groupsPerBatch}`);
    if (options.maxStepsOffPolicy < 0) throw new Error(`max_steps_off_policy must be ≥ 0, got ${options.maxStepsOffPolicy}`);
  }

  isStale(item: StampedGroup, currentStep: number): boolean {
    return currentStep - item.samplingClientStep > this.options.maxStepsOffPolicy;
  }

  /** Judges one group for training at `currentStep`, requeueing or dropping it when stale. */
  screen(item: StampedGroup, currentStep: number): OffPolicyVerdict {
    if (!this.isStale(item, currentStep)) {
      this.counts.accepted += 1;
      return "accepted";
    }
    if (this.options.dataExhausted()) {
      this.counts.discarded += 1;
      return "discarded";
    }
    this.options.requeue(item.builder);
    this.counts.requeued += 1;
    return "requeued";
  }

  /** Screens the group and keeps it for the next batch when fresh enough. */
  offer(item: StampedGroup, currentStep: number): OffPolicyVerdict {
    const verdict = this.screen(item, currentStep);
    if (verdict === "accepted") this.pending.push(item);
    return verdict;
  }

  get size(): number {
    return this.pending.length;
  }

  /** A full batch once `groupsPerBatch` fresh groups are waiting, else null. */
  takeBatch(): StampedGroup[] | null {
    if (this.pending.length < this.options.groupsPerBatch) return null;
    const batch = this.pending.slice(0, this.options.groupsPerBatch);
    this.pending = this.pending.slice(this.options.groupsPerBatch);
    return batch;
  }
}
