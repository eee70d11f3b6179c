// One game shared by two seats (the cookbook's TwoPlayerCoordinator): the current state, whose turn
// it is, each seat's conversation as that seat sees it, and promises that wake a seat when its turn
// comes or the game ends. Each seat's Env runs in its own rollout; they meet only here, so a seat's
// step returns once the other seat (another rollout of the same policy, or a fixed opponent) has
// answered. Single-threaded JS needs no locks: every change happens between awaits.
import type { Message } from "../renderers/policyRenderer.ts";
import { otherSeat, type GameEnd, type MoveRecord, type Seat, type TurnGame } from "./game.ts";

export type SubmitResult = { ok: true } | { ok: false; error: string };

export class TwoPlayerCoordinator<S> {
  private current: S;
  private ended: GameEnd | null = null;
  private readonly moves: MoveRecord[] = [];
  private readonly conversations: [Message[], Message[]];
  /** Whether a seat's conversation already ends with the prompt of its pending turn. */
  private readonly prompted: [boolean, boolean] = [false, false];
  private waiters: { seat: Seat; resolve: () => void }[] = [];

  constructor(
    readonly game: TurnGame<S>,
    initialState: S,
  ) {
    this.current = initialState;
    this.conversations = [this.openConversation(initialState, 0), this.openConversation(initialState, 1)];
    this.ended = game.outcome(initialState);
  }

  private openConversation(state: S, seat: Seat): Message[] {
    const system = this.game.systemPrompt(state, seat);
    return system === null ? [] : [{ role: "system", content: system }];
  }

  get state(): S {
    return this.current;
  }

  get toMove(): Seat {
    return this.game.toMove(this.current);
  }

  get done(): boolean {
    return this.ended !== null;
  }

  get end(): GameEnd | null {
    return this.ended;
  }

  get history(): readonly MoveRecord[] {
    return this.moves;
  }

  seatName(seat: Seat): string {
    return this.game.seatNames[seat];
  }

  /**
   * The seat's conversation so far. On its turn this ends with the prompt it must answer (added
   * the first time it is asked for); after the game it ends with what it was told at the end.
   */
  conversation(seat: Seat): Message[] {
    if (!this.done && this.toMove === seat && !this.prompted[seat]) {
      const other = otherSeat(seat);
      const last = this.moves.at(-1);
      const lastByOther = last !== undefined && last.seat === other ? last : null;
      this.conversations[seat].push({ role: "user", content: this.game.turnPrompt(this.current, seat, lastByOther), name: this.seatName(other) });
      this.prompted[seat] = true;
    }
    return [...this.conversations[seat]];
  }

  /** Resolves when it is `seat`'s turn or the game is over. */
  waitForTurn(seat: Seat): Promise<void> {
    if (this.done || this.toMove === seat) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seat, resolve }));
  }

  private notify(): void {
    const ready = this.waiters.filter((w) => this.done || this.toMove === w.seat);
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  private requireTurn(seat: Seat): void {
    if (this.done) throw new Error(`${this.game.name}: ${this.seatName(seat)} moved after the game ended (${this.ended?.reason})`);
    if (this.toMove !== seat) throw new Error(`${this.game.name}: it is ${this.seatName(this.toMove)}'s turn, not ${this.seatName(seat)}'s`);
  }

  /**
   * `seat` says `text`. A legal move changes the state and wakes the other seat; an illegal one
   * changes nothing and returns why (the seat's parse-error policy then retries or forfeits).
   */
  submit(seat: Seat, text: string): SubmitResult {
    this.requireTurn(seat);
    const result = this.game.play(this.current, seat, text);
    if (!result.ok) return result;
    this.conversation(seat);
    this.conversations[seat].push({ role: "assistant", content: text, name: this.seatName(seat) });
    this.prompted[seat] = false;
    const move: MoveRecord = { seat, text, summary: result.summary };
    this.moves.push(move);
    this.current = result.state;
    const end = this.game.outcome(this.current);
    if (end !== null) this.finish(end, move);
    this.notify();
    return { ok: true };
  }

  /** An illegal move the seat may take back: it stays in the conversation with the game's answer. */
  retry(seat: Seat, text: string, error: string): void {
    this.requireTurn(seat);
    this.conversation(seat);
    this.conversations[seat].push(
      { role: "assistant", content: text, name: this.seatName(seat) },
      { role: "user", content: this.game.retryPrompt(this.current, seat, error), name: this.seatName(otherSeat(seat)) },
    );
  }

  /** `seat` loses by an illegal or unparsable move (`text` as it said it, `reason` why). */
  forfeit(seat: Seat, text: string, reason: string): void {
    this.requireTurn(seat);
    this.conversation(seat);
    this.conversations[seat].push({ role: "assistant", content: text, name: this.seatName(seat) });
    this.prompted[seat] = false;
    const move: MoveRecord = { seat, text, summary: reason };
    this.moves.push(move);
    this.finish({ winner: otherSeat(seat), reason: "forfeit", forfeitBy: seat }, move);
    this.notify();
  }

  /** Ends the game with no result (a masked parse error, a budget, or cleanup after a failed rollout). */
  abort(reason: string): void {
    if (this.done) return;
    this.ended = { winner: null, reason, abandoned: true };
    this.notify();
  }

  private finish(end: GameEnd, last: MoveRecord): void {
    this.ended = end;
    for (const seat of [0, 1] as const) {
      this.conversations[seat].push({ role: "user", content: this.game.endPrompt(this.current, seat, end, last), name: this.seatName(otherSeat(seat)) });
    }
  }
}
