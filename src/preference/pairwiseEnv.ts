// Pairwise-preference RL (docs/cookbook-parity.md#dpo-preference-rl-and-distillation): every env of a group answers the same prompt; the group's
// completions then play a tournament judged by a preference model, and each completion's reward is
// (wins − losses) / matchups + format_coef·(valid − 1).
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import { emptyModelInput } from "../rl/tokenSeq.ts";
import {
  EnvGroupBuilder,
  EpisodeEndReason,
  stopMetric,
  type Action,
  type ActionExtra,
  type Env,
  type GroupReward,
  type InitialObservation,
  type RLDataset,
  type StepResult,
  type Trajectory,
} from "../rl/types.ts";
import type { PreferenceModel } from "./preferenceModel.ts";

export const TOURNAMENT_PATTERNS = ["all_pairs_both_ways", "all_pairs_one_way"] as const;
export type TournamentPattern = (typeof TOURNAMENT_PATTERNS)[number];

/** Matchups (i, j): i plays A, j plays B. Both ways: every ordered pair; one way: i < j. */
export function getPairs(n: number, pattern: TournamentPattern): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      if (pattern === "all_pairs_one_way" && j < i) continue;
      out.push([i, j]);
    }
  }
  return out;
}

/** Matchups only inside consecutive chunks of `chunkSize` players, so the count grows linearly. */
export function getPairsChunked(n: number, pattern: TournamentPattern, chunkSize: number): Array<[number, number]> {
  if (!Number.isInteger(chunkSize) || chunkSize < 2) throw new Error(`matchup_group_size must be an integer >= 2, got ${chunkSize}`);
  const out: Array<[number, number]> = [];
  for (let start = 0; start < n; start += chunkSize) {
    const size = Math.min(chunkSize, n - start);
    for (const [i, j] of getPairs(size, pattern)) out.push([start + i, start + j]);
  }
  return out;
}

/** One reply to the prompt; the reward comes from the group's tournament, so a step earns 0. */
export class PreferenceEnv implements Env {
  constructor(
    readonly convoPrefix: Message[],
    readonly renderer: Renderer,
  ) {}

  async initialObservation(): Promise<InitialObservation> {
    return { observation: this.renderer.buildGenerationPrompt(this.convoPrefix), stopCondition: this.renderer.getStopSequences() };
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    const { message } = this.renderer.parseResponse(action);
    return {
      reward: 0,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.renderer.getStopSequences(),
      metrics: { [stopMetric(extra.stopReason === "length" ? EpisodeEndReason.MAX_TOKENS : EpisodeEndReason.COMPLETED)]: 1 },
      messages: [...this.convoPrefix, { ...message, role: "assistant" }],
    };
  }
}

export interface TournamentResult {
  pairs: Array<[number, number]>;
  /** Preference score of each matchup: −1 = i (A) won, +1 = j (B) won, 0 = tie. */
  scores: number[];
  winMinusLoss: number[];
  valid: boolean[];
}

export interface PairwiseGroupOptions {
  pattern?: TournamentPattern;
  /** Chunk size of the tournament (default 4, as in the cookbook). */
  matchupGroupSize?: number;
  formatCoef?: number;
}

/** Log key of trajectory i's net result against trajectory j (wins − losses over their matchups). */
export const VERSUS_PREFIX = "vs_";

/**
 * Each trajectory's tournament, for transcripts: `vs_<j>` = its wins − losses against j over
 * every matchup they played (both orders when the pattern plays both ways), `matchups` = how many
 * it played. Score −1 means the first of the pair (A) won.
 */
export function tournamentLogs(n: number, pairs: readonly (readonly [number, number])[], scores: readonly number[]): Array<Record<string, number>> {
  const logs = Array.from({ length: n }, () => ({ matchups: 0 }) as Record<string, number>);
  pairs.forEach(([i, j], k) => {
    const s = scores[k]!;
    const a = logs[i]!;
    const b = logs[j]!;
    a[`${VERSUS_PREFIX}${j}`] = (a[`${VERSUS_PREFIX}${j}`] ?? 0) - s;
    b[`${VERSUS_PREFIX}${i}`] = (b[`${VERSUS_PREFIX}${i}`] ?? 0) + s;
    a.matchups! += 1;
    b.matchups! += 1;
  });
  return logs;
}

export class PairwisePreferenceGroupBuilder extends EnvGroupBuilder {
  readonly pattern: TournamentPattern;
  readonly matchupGroupSize: number;
  readonly formatCoef: number;
  /** The last tournament played, for transcripts and tests. */
  lastTournament: TournamentResult | null = null;

  constructor(
    readonly convoPrefix: Message[],
    readonly renderer: Renderer,
    readonly preferenceModel: PreferenceModel,
    readonly numEnvs: number,
    options: PairwiseGroupOptions = {},
  ) {
    super();
    this.pattern = options.pattern ?? "all_pairs_both_ways";
    this.matchupGroupSize = options.matchupGroupSize ?? 4;
    this.formatCoef = options.formatCoef ?? 1.0;
  }

  async makeEnvs(): Promise<Env[]> {
    return Array.from({ length: this.numEnvs }, () => new PreferenceEnv(this.convoPrefix, this.renderer));
  }

  private response(traj: Trajectory): { message: Message; valid: boolean } {
    if (traj.transitions.length !== 1) throw new Error(`pairwise preference envs are single-turn; a trajectory has ${traj.transitions.length} turns`);
    const { message, termination } = this.renderer.parseResponse(traj.transitions[0]!.ac.tokens);
    return { message: { ...message, role: "assistant" }, valid: termination !== "malformed" };
  }

  override async computeGroupRewards(trajectories: Trajectory[], _envs: Env[] = []): Promise<GroupReward[]> {
    const responses = trajectories.map((t) => this.response(t));
    const pairs = getPairsChunked(responses.length, this.pattern, this.matchupGroupSize);
    const scores = await Promise.all(
      pairs.map(([i, j]) =>
        this.preferenceModel.score({ promptConversation: this.convoPrefix, completionA: [responses[i]!.message], completionB: [responses[j]!.message] }),
      ),
    );
    const wml = responses.map(() => 0);
    const count = responses.map(() => 0);
    pairs.forEach(([i, j], k) => {
      wml[j]! += scores[k]!;
      wml[i]! -= scores[k]!;
      count[i]! += 1;
      count[j]! += 1;
    });
    const winMinusLoss = wml.map((w, i) => (count[i]! > 0 ? w / count[i]! : 0));
    this.lastTournament = { pairs, scores, winMinusLoss, valid: responses.map((r) => r.valid) };
    const logs = tournamentLogs(responses.length, pairs, scores);
    return responses.map((r, i) => ({
      reward: winMinusLoss[i]! + this.formatCoef * ((r.valid ? 1 : 0) - 1),
      metrics: { win_minus_loss: winMinusLoss[i]!, format: r.valid ? 1 : 0 },
      logs: logs[i]!,
    }));
  }

  override loggingTags(): string[] {
    return ["pair_pref"];
  }
}

/** Batches of prompts, each a group of `groupSize` replies playing one tournament. */
export class PairwisePreferenceRLDataset implements RLDataset {
  constructor(
    readonly prompts: readonly Message[][],
    readonly batchSize: number,
    readonly makeGroup: (prompt: Message[]) => EnvGroupBuilder,
    /** Number of batches; default one pass over the prompts. Prompts wrap around when larger. */
    readonly numBatches: number = Math.floor(prompts.length / batchSize),
  ) {
    if (prompts.length === 0) throw new Error("pairwise preference dataset: no prompts");
  }

  get length(): number {
    return this.numBatches;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    if (index < 0 || index >= this.numBatches) throw new RangeError(`batch ${index} is out of range: the dataset has ${this.numBatches} batches`);
    return Array.from({ length: this.batchSize }, (_, k) => this.makeGroup(this.prompts[(index * this.batchSize + k) % this.prompts.length]!));
  }
}
