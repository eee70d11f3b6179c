// RL test-set evaluation: roll out every group of a held-out dataset with the current sampler
// and report its trajectory metrics under a `test/` prefix (docs/cookbook-parity.md#rl-metric-names, evaluation).
import { join } from "node:path";
import { TinkerTokenCompleter } from "../completers.ts";
import { mixSeed } from "../random/seeds.ts";
import { iterationDir, writeRolloutSummaries } from "../log/transcripts/rolloutSummaries.ts";
import { writeRolloutHtml } from "../log/transcripts/html.ts";
import type { EvalContext, SamplingClientEvaluator } from "../eval/evaluators.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { RolloutErrorCounter, RolloutGroupError, doGroupRollout, toRolloutError, type RolloutStrategy } from "./rollouts.ts";
import { computeTrajectoryMetrics } from "./trajectoryMetrics.ts";
import type { EnvGroupBuilder, Metrics, RLDataset, TrajectoryGroup } from "./types.ts";

export type { EvalContext, SamplingClientEvaluator } from "../eval/evaluators.ts";

export function datasetToEnvGroupBuilders(dataset: RLDataset): EnvGroupBuilder[] {
  const out: EnvGroupBuilder[] = [];
  for (let i = 0; i < dataset.length; i++) out.push(...dataset.getBatch(i));
  return out;
}

export class RLTestSetEvaluator implements SamplingClientEvaluator {
  readonly builders: EnvGroupBuilder[];
  readonly name: string;
  readonly temperature: number;

  constructor(
    dataset: RLDataset,
    readonly maxTokens: number,
    options: { name?: string; strategy?: RolloutStrategy; temperature?: number; seed?: number } = {},
  ) {
    this.builders = datasetToEnvGroupBuilders(dataset);
    this.name = options.name ?? "test";
    this.strategy = options.strategy;
    this.temperature = options.temperature ?? 1.0;
    this.seed = options.seed;
  }

  readonly strategy: RolloutStrategy | undefined;
  /**
   * When set, group i samples with seed mix(seed, i) at every evaluation: identical runs report
   * identical scores, and evaluations of one run at different steps share their random draws, so
   * the difference between two of them is the policy's, not the dice's. Unset samples unseeded.
   */
  readonly seed: number | undefined;

  async evaluate(samplingClient: SamplingClient, context?: EvalContext): Promise<Metrics> {
    const counter = new RolloutErrorCounter();
    const results = await Promise.all(
      this.builders.map(async (builder, i): Promise<TrajectoryGroup | null> => {
        const policy = new TinkerTokenCompleter(
          samplingClient,
          this.maxTokens,
          this.temperature,
          undefined,
          this.seed === undefined ? undefined : mixSeed(this.seed, i),
        );
        try {
          const group = await doGroupRollout(builder, policy, this.strategy);
          counter.ingest(group);
          return group;
        } catch (err) {
          if (this.strategy === undefined || !this.strategy.catchesGroupErrors) throw err;
          counter.recordSkipped(err instanceof RolloutGroupError ? err.rolloutErrors : [toRolloutError(err)]);
          return null;
        }
      }),
    );
    const kept: { group: TrajectoryGroup; tags: string[] }[] = [];
    results.forEach((group, i) => {
      if (group !== null) kept.push({ group, tags: this.builders[i].loggingTags() });
    });
    if (context !== undefined) {
      const groups = kept.map((k) => ({ trajectoryGroup: k.group, tags: k.tags, samplingClientStep: context.iteration }));
      const base = `eval_${this.name.replace(/[^A-Za-z0-9_.-]+/g, "_")}`;
      if (context.exportRollouts) {
        writeRolloutSummaries({
          logPath: context.logPath,
          baseName: base,
          split: `eval/${this.name}`,
          iteration: context.iteration,
          groups,
          decode: context.decode,
        });
      }
      if (context.numGroupsToLog > 0) {
        writeRolloutHtml(join(iterationDir(context.logPath, context.iteration), `${base}.html`), {
          title: `Evaluation ${this.name}, iteration ${context.iteration}`,
          groups,
          maxGroups: context.numGroupsToLog,
          decode: context.decode,
        });
      }
    }
    const metrics: Metrics =
      kept.length > 0
        ? computeTrajectoryMetrics(
            kept.map((k) => k.group),
            kept.map((k) => k.tags),
          )
        : {};
    Object.assign(metrics, counter.getMetrics());
    const out: Metrics = {};
    for (const [k, v] of Object.entries(metrics)) out[`${this.name}/${k}`] = v;
    return out;
  }
}
