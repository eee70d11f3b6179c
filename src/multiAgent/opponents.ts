// Fixed opponents: a seat the policy does not play. A scripted one is a function of the game state
// (random, minimax, an oracle); a model one samples a frozen model on the seat's own conversation,
// as the cookbook's base-model opponent and twenty-questions answerer do.
import type { MessageCompleter } from "../completers.ts";
import { messageText, type Message } from "../renderers/policyRenderer.ts";
import type { Seat } from "./game.ts";

export interface Opponent<S> {
  readonly name: string;
  /** The text of this opponent's move as `seat`, given the state and the seat's conversation (ending with its prompt). */
  move(state: S, seat: Seat, conversation: Message[]): Promise<string>;
}

export function scriptedOpponent<S>(name: string, choose: (state: S, seat: Seat) => string): Opponent<S> {
  return { name, move: async (state, seat) => choose(state, seat) };
}

/** The system prompt (if any) and the last `turns` exchanges before the current prompt. */
export function recentTurns(conversation: readonly Message[], turns: number | null): Message[] {
  if (turns === null) return [...conversation];
  const system = conversation[0]?.role === "system" ? [conversation[0]] : [];
  const rest = conversation.slice(system.length);
  return [...system, ...rest.slice(Math.max(0, rest.length - (2 * turns + 1)))];
}

export class ModelOpponent<S> implements Opponent<S> {
  private completer: Promise<MessageCompleter> | null = null;

  /**
   * `makeCompleter` runs on the first move, so a model opponent that is configured but never
   * played (an evaluation that does not run, a person playing another opponent) costs nothing.
   * `historyTurns` limits how much of its past the model sees (null: all; 0: only the current prompt).
   * `seed` gives this opponent its own seed stream (the completer's fork), so its moves do not depend
   * on the order in which concurrent games reach the sampler.
   */
  constructor(
    readonly name: string,
    private readonly makeCompleter: () => Promise<MessageCompleter>,
    readonly historyTurns: number | null = null,
    readonly seed?: number,
  ) {}

  async move(_state: S, _seat: Seat, conversation: Message[]): Promise<string> {
    this.completer ??= this.makeCompleter().then((c) => (this.seed !== undefined && c.fork !== undefined ? c.fork(this.seed) : c));
    const reply = await (await this.completer).complete(recentTurns(conversation, this.historyTurns));
    return messageText(reply);
  }
}
