// Evaluation against a fixed opponent: the current policy plays a set of games (both seats) and
// the per-episode outcome metrics become rates under `test/vs_<opponent>/` — win_rate, draw_rate,
// loss_rate, win_or_draw, illegal_rate, … — with the games' transcripts beside the iteration's.
import type { SamplingClient } from "../tinker/clients.ts";
import { RLTestSetEvaluator, type EvalContext, type SamplingClientEvaluator } from "../rl/evaluator.ts";
import type { RolloutStrategy } from "../rl/rollouts.ts";
import type { Metrics, RLDataset } from "../rl/types.ts";

export class OpponentEvaluator implements SamplingClientEvaluator {
  readonly name: string;
  private readonly inner: RLTestSetEvaluator;

  constructor(
    readonly opponentName: string,
    dataset: RLDataset,
    maxTokens: number,
    options: { strategy?: RolloutStrategy; temperature?: number; seed?: number } = {},
  ) {
    this.name = `vs_${opponentName}`;
    this.inner = new RLTestSetEvaluator(dataset, maxTokens, { ...options, name: this.name });
  }

  async evaluate(samplingClient: SamplingClient, context?: EvalContext): Promise<Metrics> {
    const raw = await this.inner.evaluate(samplingClient, context);
    const out: Metrics = {};
    const all = `${this.name}/env/all/`;
    for (const [k, v] of Object.entries(raw)) {
      if (k.startsWith(all)) out[`test/${this.name}/${k.slice(all.length)}`] = v;
      else if (!k.startsWith(`${this.name}/env/`)) out[`test/${k}`] = v;
    }
    return out;
  }
}
