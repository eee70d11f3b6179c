// test/win_rate: how often a preference model prefers the policy's reply over a baseline policy's
// reply to the same held-out prompt. Each pair is judged in both orders, so a judge that always
// says "A" scores 0.5, not 0 or 1; ties count half.
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { PreferenceModel } from "./preferenceModel.ts";

export interface WinRateOptions {
  maxTokens: number;
  temperature?: number;
  seed?: number;
  /** Metric key (default "test/win_rate"). */
  key?: string;
}

async function reply(client: SamplingClient, renderer: Renderer, prompt: Message[], options: WinRateOptions, seed: number): Promise<Message> {
  const res = await client.sample(renderer.buildGenerationPrompt(prompt), 1, {
    max_tokens: options.maxTokens,
    temperature: options.temperature ?? 1,
    seed,
    stop: renderer.getStopSequences(),
  });
  const { message } = renderer.parseResponse(res.sequences[0]?.tokens ?? []);
  return { ...message, role: "assistant" };
}

/** Win rate of `policy` over `baseline` on `prompts`, judged both ways round. */
export async function computeWinRate(
  policy: SamplingClient,
  baseline: SamplingClient,
  prompts: readonly Message[][],
  renderer: Renderer,
  judge: PreferenceModel,
  options: WinRateOptions,
): Promise<{ winRate: number; wins: number; losses: number; ties: number }> {
  let wins = 0;
  let losses = 0;
  let ties = 0;
  await Promise.all(
    prompts.map(async (prompt, i) => {
      const seed = (options.seed ?? 0) * 100_003 + i;
      const [mine, theirs] = await Promise.all([reply(policy, renderer, prompt, options, seed), reply(baseline, renderer, prompt, options, seed)]);
      // Policy as B, then as A: a positive score favours B.
      const asB = await judge.score({ promptConversation: prompt, completionA: [theirs], completionB: [mine] });
      const asA = await judge.score({ promptConversation: prompt, completionA: [mine], completionB: [theirs] });
      for (const s of [asB, -asA]) {
        if (s > 0) wins += 1;
        else if (s < 0) losses += 1;
        else ties += 1;
      }
    }),
  );
  const n = wins + losses + ties;
  return { winRate: n === 0 ? Number.NaN : (wins + 0.5 * ties) / n, wins, losses, ties };
}

/** An RL-loop evaluator reporting test/win_rate of the current sampler against a fixed baseline. */
export class WinRateEvaluator {
  readonly name = "win_rate";

  constructor(
    readonly baseline: SamplingClient,
    readonly prompts: readonly Message[][],
    readonly renderer: Renderer,
    readonly judge: PreferenceModel,
    readonly options: WinRateOptions,
  ) {}

  async evaluate(samplingClient: SamplingClient): Promise<Record<string, number>> {
    const r = await computeWinRate(samplingClient, this.baseline, this.prompts, this.renderer, this.judge, this.options);
    const key = this.options.key ?? "test/win_rate";
    return { [key]: r.winRate, [`${key}/ties`]: r.ties / Math.max(1, r.wins + r.losses + r.ties) };
  }
}
