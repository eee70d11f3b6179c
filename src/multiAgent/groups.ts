// Groups of seats. Self-play: each game's two seats are one group (the cookbook's
// TwoPlayerEnvGroupBuilder), so the winner's and the loser's trajectories both train and are centred
// against each other. Against a fixed opponent: each env is its own game, the policy in the seats
// listed (alternating seats, so a group sees both sides of the board).
import type { RLRenderer } from "../renderers/policyRenderer.ts";
import { EnvGroupBuilder, type Env, type RLDataset } from "../rl/types.ts";
import type { RolloutConfig } from "../toolUse/rolloutLimits.ts";
import { TwoPlayerCoordinator } from "./coordinator.ts";
import type { Seat, TurnGame } from "./game.ts";
import type { Opponent } from "./opponents.ts";
import { SeatEnv } from "./seatEnv.ts";

/** A fresh game: its rules and starting state (e.g. twenty questions' secret). */
export interface GameSetup<S> {
  game: TurnGame<S>;
  initialState: S;
}

export interface SeatCommon {
  renderer: RLRenderer;
  rollout: RolloutConfig;
  maxGenerationTokens?: number;
  /** How many of its past turns a seat's prompt shows (null: all; see SeatEnvOptions). */
  historyTurns?: number | null;
}

abstract class GameGroupBuilder<S> extends EnvGroupBuilder {
  private readonly coordinators: TwoPlayerCoordinator<S>[] = [];

  constructor(
    readonly newGame: () => GameSetup<S>,
    readonly common: SeatCommon,
    readonly tags: string[],
  ) {
    super();
  }

  protected coordinator(): TwoPlayerCoordinator<S> {
    const { game, initialState } = this.newGame();
    const c = new TwoPlayerCoordinator(game, initialState);
    this.coordinators.push(c);
    return c;
  }

  protected seatEnv(coordinator: TwoPlayerCoordinator<S>, seat: Seat, opponent?: Opponent<S>): SeatEnv<S> {
    return new SeatEnv({ ...this.common, coordinator, seat, ...(opponent !== undefined ? { opponent } : {}) });
  }

  /** A seat still waiting when its group failed is woken by abandoning every game of the group. */
  override async cleanup(): Promise<void> {
    for (const c of this.coordinators) c.abort("cleanup");
  }

  override loggingTags(): string[] {
    return this.tags;
  }
}

export class SelfPlayGroupBuilder<S> extends GameGroupBuilder<S> {
  constructor(
    newGame: () => GameSetup<S>,
    readonly games: number,
    common: SeatCommon,
    tags: string[],
    /** Who a person plays against in `cookbook play` (alone, a self-play seat would wait forever). */
    readonly play: { opponent: Opponent<S>; seat: Seat } | null = null,
  ) {
    super(newGame, common, tags);
  }

  async makeEnvs(): Promise<Env[]> {
    const envs: Env[] = [];
    for (let g = 0; g < this.games; g++) {
      const c = this.coordinator();
      envs.push(this.seatEnv(c, 0), this.seatEnv(c, 1));
    }
    return envs;
  }

  /** The env `cookbook play` gives a person: one game against the play opponent. */
  async makePlayEnv(): Promise<Env> {
    if (this.play === null) throw new Error("this self-play group has no opponent for a person to play against");
    return this.seatEnv(this.coordinator(), this.play.seat, this.play.opponent);
  }
}

export class VsOpponentGroupBuilder<S> extends GameGroupBuilder<S> {
  constructor(
    newGame: () => GameSetup<S>,
    /** The policy's seat in each env of the group. */
    readonly seats: readonly Seat[],
    /** The opponent of env i (a scripted opponent may draw its randomness per game). */
    readonly opponent: (i: number) => Opponent<S>,
    common: SeatCommon,
    tags: string[],
    /** Who a person plays against in `cookbook play`, and in which seat (null: the first env). */
    readonly play: { opponent: Opponent<S>; seat: Seat } | null = null,
  ) {
    super(newGame, common, tags);
  }

  async makeEnvs(): Promise<Env[]> {
    return this.seats.map((seat, i) => this.seatEnv(this.coordinator(), seat, this.opponent(i)));
  }

  /** The env `cookbook play` gives a person: the play opponent and seat, not the training ones. */
  async makePlayEnv(): Promise<Env> {
    if (this.play === null) return (await this.makeEnvs())[0]!;
    return this.seatEnv(this.coordinator(), this.play.seat, this.play.opponent);
  }
}

/** Seats 0, 1, 0, 1, … for `n` envs. */
export function alternatingSeats(n: number): Seat[] {
  return Array.from({ length: n }, (_, i) => (i % 2) as Seat);
}

export class GameDataset implements RLDataset {
  constructor(
    readonly length: number,
    private readonly batch: (index: number) => EnvGroupBuilder[],
  ) {}

  getBatch(index: number): EnvGroupBuilder[] {
    if (index < 0 || index >= this.length) throw new RangeError(`batch ${index} is outside 0..${this.length - 1}`);
    return this.batch(index);
  }
}
