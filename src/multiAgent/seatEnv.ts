// One seat of a two-player game as an RL Env (the cookbook's TwoPlayerEnv). Its observation is the
// seat's own conversation rendered by the policy's renderer; its action is one move. After moving,
// the step waits for the other seat — another rollout of the same policy sharing the coordinator
// (self-play), or a fixed opponent this env asks itself — and returns when this seat must move
// again or the game is over. Every way a turn can go wrong ends in the coordinator too (forfeit or
// abort), so the other seat is never left waiting.
import type { StopCondition } from "../completers.ts";
import { messageText, type Message, type RLRenderer } from "../renderers/policyRenderer.ts";
import { emptyModelInput, modelInputLength } from "../rl/tokenSeq.ts";
import {
  InitialObservationOverflow,
  PARSE_ERROR_MASKED_METRIC_KEY,
  EpisodeEndReason,
  stopMetric,
  type Action,
  type ActionExtra,
  type Env,
  type InitialObservation,
  type Metrics,
  type StepResult,
} from "../rl/types.ts";
import { terminationReward, type RolloutConfig } from "../toolUse/rolloutLimits.ts";
import type { TwoPlayerCoordinator } from "./coordinator.ts";
import { otherSeat, type Seat } from "./game.ts";
import { recentTurns, type Opponent } from "./opponents.ts";

export interface SeatEnvOptions<S> {
  renderer: RLRenderer;
  coordinator: TwoPlayerCoordinator<S>;
  seat: Seat;
  /** Absent in self-play: the other seat is another env on the same coordinator. */
  opponent?: Opponent<S>;
  /** Turn / token / time budgets, the parse-error policy (an illegal move is a parse error) and budget rewards. */
  rollout: RolloutConfig;
  /** Generation tokens reserved when checking max_trajectory_tokens. */
  maxGenerationTokens?: number;
  /**
   * How much of its own past a seat's prompt holds: null, the whole conversation; 0, only the system
   * prompt and the current turn's message (the cookbook's TextArena prompt is one such message).
   * Transcripts always show the whole conversation.
   */
  historyTurns?: number | null;
  now?: () => number;
}

export class SeatEnv<S> implements Env {
  private turns = 0;
  private illegalMoves = 0;
  private sampledTokens = 0;
  private startedAt = 0;
  private lastPrompt: Message[] = [];
  /** Set when this seat's own turn ended the episode without a game result (mask, budget). */
  private ownStop: { reason: EpisodeEndReason; reward: number; metrics: Metrics } | null = null;
  private readonly now: () => number;

  constructor(readonly options: SeatEnvOptions<S>) {
    this.now = options.now ?? Date.now;
  }

  get seat(): Seat {
    return this.options.seat;
  }

  private get coordinator(): TwoPlayerCoordinator<S> {
    return this.options.coordinator;
  }

  private stop(): StopCondition {
    return this.options.renderer.getStopSequences();
  }

  /** Lets the other seat play until this seat must move or the game is over. */
  private async untilMyTurn(): Promise<void> {
    const c = this.coordinator;
    const opponent = this.options.opponent;
    while (!c.done && c.toMove !== this.seat) {
      if (opponent === undefined) {
        await c.waitForTurn(this.seat);
        continue;
      }
      const seat = otherSeat(this.seat);
      const text = (await opponent.move(c.state, seat, c.conversation(seat))).trim();
      const result = c.submit(seat, text);
      // A fixed opponent gets no second chance: an illegal move loses it the game.
      if (!result.ok) c.forfeit(seat, text, result.error);
    }
  }

  private render(conversation: Message[]) {
    return this.options.renderer.buildGenerationPrompt(recentTurns(conversation, this.options.historyTurns ?? null));
  }

  private overflows(promptLength: number): boolean {
    const max = this.options.rollout.limits.max_trajectory_tokens;
    return max !== null && promptLength + (this.options.maxGenerationTokens ?? 0) > max;
  }

  /** The finished game's reward and per-episode metrics for this seat. */
  private final(): { reward: number; metrics: Metrics } {
    const c = this.coordinator;
    const end = c.end;
    const metrics: Metrics = { turns: this.turns, moves: c.history.length, illegal_moves: this.illegalMoves };
    if (this.ownStop !== null)
      return {
        reward: this.ownStop.reward,
        metrics: {
          ...metrics,
          ...this.ownStop.metrics,
          illegal_rate: this.ownStop.reason === EpisodeEndReason.PARSE_ERROR ? 1 : 0,
          [stopMetric(this.ownStop.reason)]: 1,
        },
      };
    if (end === null) throw new Error(`${c.game.name}: the episode of ${c.seatName(this.seat)} ended before its game did`);
    const forfeited = end.forfeitBy === this.seat;
    Object.assign(metrics, {
      illegal_rate: forfeited ? 1 : 0,
      opponent_illegal_rate: end.forfeitBy === otherSeat(this.seat) ? 1 : 0,
      [stopMetric(forfeited ? EpisodeEndReason.PARSE_ERROR : EpisodeEndReason.COMPLETED)]: 1,
    });
    // A game abandoned by the other seat (its budget or masked turn) has no result to score.
    if (end.abandoned === true) return { reward: 0, metrics: { ...metrics, abandoned: 1 } };
    Object.assign(metrics, c.game.outcomeMetrics(c.state, end, this.seat));
    return { reward: forfeited ? this.options.rollout.parse_error.reward : c.game.reward(c.state, end, this.seat), metrics };
  }

  async initialObservation(): Promise<InitialObservation | InitialObservationOverflow> {
    this.startedAt = this.now();
    await this.untilMyTurn();
    if (this.coordinator.done) {
      // The game ended before this seat moved (the other seat lost on its first move): one empty
      // turn carries the result, and nothing is trained for this seat.
      const { reward, metrics } = this.final();
      return new InitialObservationOverflow(reward, { ...metrics, no_turn: 1 }, { game_over_before_first_turn: this.coordinator.end?.reason ?? "" });
    }
    this.lastPrompt = this.coordinator.conversation(this.seat);
    const prompt = this.render(this.lastPrompt);
    if (this.overflows(modelInputLength(prompt))) {
      this.coordinator.abort("context_overflow");
      const reward = terminationReward(this.options.rollout.termination_reward, EpisodeEndReason.CONTEXT_OVERFLOW);
      return new InitialObservationOverflow(
        reward,
        { [stopMetric(EpisodeEndReason.CONTEXT_OVERFLOW)]: 1 },
        { initial_observation_overflow: `prompt of ${modelInputLength(prompt)} tokens` },
      );
    }
    return { observation: prompt, stopCondition: this.stop() };
  }

  private done(messages: Message[]): StepResult {
    const { reward, metrics } = this.final();
    return {
      reward,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.stop(),
      metrics,
      logs: { result: this.coordinator.end?.reason ?? "" },
      messages,
    };
  }

  /** Ends this seat's episode on a budget or masked turn; the game is abandoned for both seats. */
  private stopOwn(reason: EpisodeEndReason, reward: number, metrics: Metrics, messages: Message[]): StepResult {
    this.ownStop = { reason, reward, metrics };
    this.coordinator.abort(reason);
    return this.done(messages);
  }

  private budgetExceeded(): EpisodeEndReason | null {
    const limits = this.options.rollout.limits;
    if (limits.max_sampled_tokens !== null && this.sampledTokens > limits.max_sampled_tokens) return EpisodeEndReason.MAX_SAMPLED_TOKENS;
    if (limits.max_wall_seconds !== null && (this.now() - this.startedAt) / 1000 > limits.max_wall_seconds) return EpisodeEndReason.ROLLOUT_TIMEOUT;
    return null;
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    const c = this.coordinator;
    this.turns += 1;
    this.sampledTokens += action.length;
    const { message, termination } = this.options.renderer.parseResponse(action);
    const text = messageText(message);
    const said: Message[] = [...this.lastPrompt, { role: "assistant", content: text, name: c.seatName(this.seat) }];
    const rollout = this.options.rollout;
    if (c.done) return this.done(said);

    const budget = this.budgetExceeded();
    if (budget !== null) return this.stopOwn(budget, terminationReward(rollout.termination_reward, budget), {}, said);

    let error: string | null = null;
    if (extra.stopReason === "length" || termination === "malformed") error = "the reply did not end where a turn ends";
    else {
      const result = c.submit(this.seat, text);
      if (!result.ok) error = result.error;
    }
    if (error !== null) {
      this.illegalMoves += 1;
      const policy = rollout.parse_error;
      if (policy.mode === "mask") return this.stopOwn(EpisodeEndReason.PARSE_ERROR, 0, { [PARSE_ERROR_MASKED_METRIC_KEY]: 1 }, said);
      const retry = policy.mode === "feedback" && this.illegalMoves <= policy.max_retries && this.turns < rollout.limits.max_turns;
      if (!retry) {
        c.forfeit(this.seat, text, error);
        return this.done(c.conversation(this.seat));
      }
      c.retry(this.seat, text, error);
      return this.next(policy.reward, { illegal_move: 1 }, said);
    }
    await this.untilMyTurn();
    if (c.done) return this.done(c.conversation(this.seat));
    if (this.turns >= rollout.limits.max_turns)
      return this.stopOwn(EpisodeEndReason.MAX_TURNS, terminationReward(rollout.termination_reward, EpisodeEndReason.MAX_TURNS), {}, c.conversation(this.seat));
    return this.next(0, {}, said);
  }

  /** The next turn's observation (its conversation ends with the prompt this seat must answer). */
  private next(reward: number, metrics: Metrics, said: Message[]): StepResult {
    const messages = this.coordinator.conversation(this.seat);
    const nextObservation = this.render(messages);
    if (this.overflows(modelInputLength(nextObservation))) {
      return this.stopOwn(
        EpisodeEndReason.CONTEXT_OVERFLOW,
        terminationReward(this.options.rollout.termination_reward, EpisodeEndReason.CONTEXT_OVERFLOW),
        {},
        messages,
      );
    }
    this.lastPrompt = messages;
    // The transcript shows what this turn saw and said; the next prompt belongs to the next turn.
    return { reward, episodeDone: false, nextObservation, nextStopCondition: this.stop(), metrics, logs: {}, messages: said };
  }
}
