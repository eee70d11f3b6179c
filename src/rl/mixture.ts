// A weighted mixture of RL datasets (the cookbook's InterleavedRLDatasetBuilder): each batch holds
// `groupsPerBatch` groups, each drawn whole from one source (a group's advantages are centred on
// its own mean, so a group never mixes problems), sources picked by weight on a schedule fixed by
// the seed. Every group carries its source's name as a logging tag, so `env/<source>/reward` and
// the other per-tag metrics are logged for each source. The test sets of the sources are kept
// side by side (their groups evaluated under their own tags).
import { MixtureError, mixtureProbabilities, scheduleGroups } from "../data/mixture.ts";
import { type Env, EnvGroupBuilder, type GroupReward, type RLDataset, type RLDatasetBuilder, type Trajectory } from "./types.ts";

export interface RLMixtureSource {
  /** The tag its metrics are logged under (`env/<name>/…`). */
  name: string;
  weight: number;
  builder: RLDatasetBuilder;
}

/** A source's group, with the source's name added to its logging tags. */
class SourceTaggedGroup extends EnvGroupBuilder {
  constructor(
    private readonly inner: EnvGroupBuilder,
    private readonly source: string,
  ) {
    super();
  }
  makeEnvs(): Promise<Env[]> {
    return this.inner.makeEnvs();
  }
  override computeGroupRewards(trajectories: Trajectory[], envs: Env[]): Promise<GroupReward[]> {
    return this.inner.computeGroupRewards(trajectories, envs);
  }
  override cleanup(): Promise<void> {
    return this.inner.cleanup();
  }
  override loggingTags(): string[] {
    const tags = this.inner.loggingTags();
    return tags.includes(this.source) ? tags : [...tags, this.source];
  }
}

export class InterleavedRLDataset implements RLDataset {
  private readonly schedule: [number, number][][];
  private readonly groupsPerSourceBatch: number[];

  constructor(
    private readonly sources: readonly { name: string; dataset: RLDataset }[],
    probabilities: readonly number[],
    groupsPerBatch: number,
    totalBatches: number | null,
    seed: number,
  ) {
    if (!Number.isInteger(groupsPerBatch) || groupsPerBatch < 1) throw new MixtureError(`groups_per_batch must be a positive integer, got ${groupsPerBatch}`);
    // One batch per source tells its groups per batch; groups are then addressed one by one.
    this.groupsPerSourceBatch = sources.map(({ name, dataset }) => {
      if (dataset.length === 0) throw new MixtureError(`mixture source ${name} has no batches`);
      const n = dataset.getBatch(0).length;
      if (n === 0) throw new MixtureError(`mixture source ${name}: batch 0 has no groups`);
      return n;
    });
    const counts = sources.map(({ dataset }, i) => dataset.length * this.groupsPerSourceBatch[i]!);
    this.schedule = scheduleGroups(counts, probabilities, groupsPerBatch, totalBatches, seed);
  }

  get length(): number {
    return this.schedule.length;
  }

  /** How many groups of each source the whole schedule uses, by name. */
  scheduledGroups(): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(this.sources.map((s) => [s.name, 0]));
    for (const batch of this.schedule) for (const [source] of batch) out[this.sources[source]!.name]! += 1;
    return out;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    const batch = this.schedule[index];
    if (batch === undefined) throw new RangeError(`batch ${index} is out of range: the mixture has ${this.schedule.length} batches`);
    return batch.map(([source, group]) => {
      const { name, dataset } = this.sources[source]!;
      const per = this.groupsPerSourceBatch[source]!;
      const builders = dataset.getBatch(Math.floor(group / per));
      const builder = builders[group % per];
      if (builder === undefined) {
        throw new MixtureError(`mixture source ${name}: batch ${Math.floor(group / per)} has ${builders.length} groups, expected ${per} as batch 0 has`);
      }
      return new SourceTaggedGroup(builder, name);
    });
  }
}

/** The test sets of several sources, one after another, each group tagged with its source. */
class ConcatenatedRLDataset implements RLDataset {
  constructor(private readonly parts: readonly { name: string; dataset: RLDataset }[]) {}
  get length(): number {
    return this.parts.reduce((n, p) => n + p.dataset.length, 0);
  }
  getBatch(index: number): EnvGroupBuilder[] {
    let i = index;
    for (const { name, dataset } of this.parts) {
      if (i < dataset.length) return dataset.getBatch(i).map((b) => new SourceTaggedGroup(b, name));
      i -= dataset.length;
    }
    throw new RangeError(`batch ${index} is out of range: the test sets have ${this.length} batches`);
  }
}

/** Builds every source, then mixes their training sets by weight. */
export function interleavedRLDatasetBuilder(
  sources: readonly RLMixtureSource[],
  options: { groupsPerBatch: number; totalBatches: number | null; seed: number },
): RLDatasetBuilder {
  const names = sources.map((s) => s.name);
  if (new Set(names).size !== names.length) throw new MixtureError(`mixture source names must differ: ${names.join(", ")}`);
  return {
    async build() {
      const built = await Promise.all(sources.map((s) => s.builder.build()));
      const probabilities = mixtureProbabilities(
        sources.map((s) => s.weight),
        sources.map(() => 1),
        names,
      );
      const train = new InterleavedRLDataset(
        built.map((b, i) => ({ name: names[i]!, dataset: b.train })),
        probabilities,
        options.groupsPerBatch,
        options.totalBatches,
        options.seed,
      );
      const tests = built.flatMap((b, i) => (b.test ? [{ name: names[i]!, dataset: b.test }] : []));
      return { train, test: tests.length === 0 ? null : new ConcatenatedRLDataset(tests) };
    },
  };
}
