// The cookbook's guess-the-number game (multiplayer_rl.guess_number) as a MessageEnv: the policy
// answers "Guess: N", a scripted user replies "Too low" / "Too high" / "Correct", for at most
// `maxTurns` guesses. Two reward shapes:
//  - "binary": 1 for finding the number, 0 otherwise (the cookbook's);
//  - "interval": each guess earns the fraction of the remaining uncertainty (in bits) it removed,
//    so an episode's total is 1 when the number is found and partial credit for narrowing it —
//    a dense signal that a small model can climb from its first steps.
// An answer that is not "Guess: <integer>" ends the episode with `formatPenalty`.
import { GUESS_MAX_TURNS, GUESS_SYSTEM_PROMPT, GUESS_UPPER_BOUND } from "../../data/synthetic/guessNumber.ts";
import { Prng } from "../../data/synthetic/prng.ts";
import { EnvFromMessageEnv, type MessageEnv, type MessageStepResult } from "../messageEnv.ts";
import { messageText, type Message, type RLRenderer } from "../../renderers/policyRenderer.ts";
import { EnvGroupBuilder, EpisodeEndReason, stopMetric, type Env, type RLDataset, type RLDatasetBuilder } from "../types.ts";

export type GuessRewardShape = "binary" | "interval";

export interface GuessNumberOptions {
  maxTurns?: number;
  upperBound?: number;
  rewardShape?: GuessRewardShape;
  formatPenalty?: number;
  /** Role of the player's earlier guesses in the prompt ("player" as in the cookbook, or "assistant"). */
  historyRole?: "player" | "assistant";
}

const GUESS_RE = /^\s*Guess:\s*([+-]?\d+)\s*$/;

/** The integer in a "Guess: N" answer, or null when the answer has any other shape. */
export function parseGuess(text: string): number | null {
  const m = GUESS_RE.exec(text);
  return m === null ? null : Number(m[1]);
}

export class GuessNumberEnv implements MessageEnv {
  readonly maxTurns: number;
  readonly upperBound: number;
  readonly rewardShape: GuessRewardShape;
  readonly formatPenalty: number;
  readonly historyRole: "player" | "assistant";
  private history: Message[] = [];
  private turns = 0;
  /** Numbers still consistent with every reply so far (inclusive bounds). */
  private lo = 0;
  private hi: number;

  constructor(
    readonly target: number,
    options: GuessNumberOptions = {},
  ) {
    this.maxTurns = options.maxTurns ?? GUESS_MAX_TURNS;
    this.upperBound = options.upperBound ?? GUESS_UPPER_BOUND;
    this.rewardShape = options.rewardShape ?? "interval";
    this.formatPenalty = options.formatPenalty ?? -0.1;
    this.historyRole = options.historyRole ?? "player";
    this.hi = this.upperBound;
    if (!Number.isInteger(target) || target < 0 || target > this.upperBound) {
      throw new RangeError(`target ${target} is outside 0..${this.upperBound}`);
    }
  }

  private systemPrompt(): string {
    return this.upperBound === GUESS_UPPER_BOUND ? GUESS_SYSTEM_PROMPT : GUESS_SYSTEM_PROMPT.split(String(GUESS_UPPER_BOUND)).join(String(this.upperBound));
  }

  async initialObservation(): Promise<Message[]> {
    this.history = [{ role: "system", content: this.systemPrompt() }];
    return [...this.history];
  }

  /** log2 of the number of candidates left; 0 once the number is known. */
  private bits(lo: number, hi: number): number {
    return Math.log2(Math.max(1, hi - lo + 1));
  }

  async step(message: Message): Promise<MessageStepResult> {
    const text = messageText(message);
    const guess = parseGuess(text);
    this.turns += 1;
    if (guess === null) {
      return {
        reward: this.formatPenalty,
        episodeDone: true,
        nextMessages: [...this.history, { role: "assistant", content: text }],
        metrics: { format: 0, correct: 0, turns: this.turns, [stopMetric(EpisodeEndReason.PARSE_ERROR)]: 1 },
        logs: { target: this.target, answer: text.slice(0, 200) },
      };
    }
    const totalBits = this.bits(0, this.upperBound);
    const before = this.bits(this.lo, this.hi);
    const correct = guess === this.target;
    let reply: string;
    if (correct) {
      reply = "Correct";
      this.lo = this.hi = guess;
    } else if (guess < this.target) {
      reply = "Too low";
      this.lo = Math.max(this.lo, guess + 1);
    } else {
      reply = "Too high";
      this.hi = Math.min(this.hi, guess - 1);
    }
    const after = correct ? 0 : this.bits(this.lo, this.hi);
    const shaped = totalBits > 0 ? (before - after) / totalBits : 0;
    const done = correct || this.turns >= this.maxTurns;
    const reward = this.rewardShape === "interval" ? shaped : correct ? 1 : 0;
    this.history.push({ role: this.historyRole, content: `Guess: ${guess}` }, { role: "user", content: reply });
    const metrics: Record<string, number> = { format: 1, in_range: guess >= 0 && guess <= this.upperBound ? 1 : 0 };
    if (done) {
      Object.assign(metrics, {
        correct: correct ? 1 : 0,
        turns: this.turns,
        [stopMetric(correct ? EpisodeEndReason.COMPLETED : EpisodeEndReason.MAX_TURNS)]: 1,
      });
    }
    return {
      reward,
      episodeDone: done,
      nextMessages: [...this.history],
      metrics,
      logs: { target: this.target, guess, reply },
    };
  }
}

/** `groupSize` games with the same hidden number, so rewards are compared like for like. */
export class GuessNumberGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly renderer: RLRenderer,
    readonly target: number,
    readonly groupSize: number,
    readonly options: GuessNumberOptions & { maxTokens?: number } = {},
  ) {
    super();
  }

  async makeEnvs(): Promise<Env[]> {
    return Array.from(
      { length: this.groupSize },
      () =>
        new EnvFromMessageEnv(this.renderer, new GuessNumberEnv(this.target, this.options), {
          failedParseReward: this.options.formatPenalty ?? -0.1,
          contextOverflowReward: this.options.formatPenalty ?? -0.1,
        }),
    );
  }

  override loggingTags(): string[] {
    return ["guess_number"];
  }
}

export interface GuessNumberDatasetOptions extends GuessNumberOptions {
  renderer: RLRenderer;
  batchSize: number;
  groupSize: number;
  numBatches: number;
  seed: number;
}

export class GuessNumberDataset implements RLDataset {
  constructor(readonly options: GuessNumberDatasetOptions) {}

  get length(): number {
    return this.options.numBatches;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    const { renderer, batchSize, groupSize, seed } = this.options;
    const upper = this.options.upperBound ?? GUESS_UPPER_BOUND;
    const rng = new Prng((seed * 1_000_003 + index * 7919 + 29) >>> 0);
    return Array.from({ length: batchSize }, () => new GuessNumberGroupBuilder(renderer, rng.int(0, upper - 1), groupSize, this.options));
  }
}

export function guessNumberDatasetBuilder(options: GuessNumberDatasetOptions & { testGroups?: number }): RLDatasetBuilder {
  return {
    async build() {
      const train = new GuessNumberDataset(options);
      const n = options.testGroups ?? 0;
      // A different seed stream for the test games; one batch of `n` groups.
      const test = n > 0 ? new GuessNumberDataset({ ...options, seed: options.seed + 104_729, batchSize: n, numBatches: 1 }) : null;
      return { train, test };
    },
  };
}
