// Twenty questions (the cookbook's multiplayer_rl/twenty_questions) over a generated attribute
// table: the questioner (seat 0, the policy) asks "Is it <property>?" or guesses "Guess: <thing>";
// the answerer (seat 1) knows the secret and replies — a scripted oracle over the table (Yes / No /
// Unknown, "Correct" to the right guess), or a frozen model. The game, not the answerer, decides
// whether a guess is right, so a model answerer cannot hand out reward. It ends at the right guess,
// after `maxGuesses` wrong ones, or when the question budget is spent.
import type { NounTable } from "../../data/synthetic/nouns.ts";
import type { Metrics } from "../../rl/types.ts";
import type { GameEnd, MoveRecord, PlayResult, Seat, TurnGame } from "../game.ts";

export interface TwentyQuestionsState {
  readonly secret: string;
  /** Questions and guesses asked so far. */
  readonly asked: number;
  readonly wrongGuesses: number;
  readonly found: boolean;
  /** Whose turn: the answerer replies to every question but a right guess. */
  readonly toMove: Seat;
}

export interface TwentyQuestionsRules {
  table: NounTable;
  /** Questions (guesses included) per game. */
  maxQuestions: number;
  /** Wrong guesses that end the game (null: only the question budget does, as in the cookbook). */
  maxGuesses: number | null;
  /** Reward of a right guess loses this much per question asked before it (0: always 1). */
  questionPenalty: number;
}

const GUESS_RE = /^\s*guess:\s*([a-z]+)\s*\.?\s*$/i;
const QUESTION_RE = /^\s*is it (?:an? )?([a-z]+)\s*\?\s*$/i;

export type ParsedQuestion = { kind: "guess"; noun: string } | { kind: "attribute"; attribute: string } | { kind: "other" };

/** "Guess: X" and "Is it a X?" (X a thing of the table) are guesses; "Is it P?" asks about P. */
export function parseQuestion(text: string, table: NounTable): ParsedQuestion {
  const guess = GUESS_RE.exec(text);
  if (guess !== null) return { kind: "guess", noun: guess[1].toLowerCase() };
  const question = QUESTION_RE.exec(text);
  if (question === null) return { kind: "other" };
  const word = question[1].toLowerCase();
  return table.nouns.includes(word) ? { kind: "guess", noun: word } : { kind: "attribute", attribute: word };
}

/** The scripted answerer's reply to `text` when the secret is `secret`. */
export function oracleAnswer(table: NounTable, secret: string, text: string): string {
  const q = parseQuestion(text, table);
  if (q.kind === "guess") return q.noun === secret ? "Correct" : "No";
  if (q.kind === "attribute" && table.attributes.includes(q.attribute)) return table.has[secret][q.attribute] ? "Yes" : "No";
  return "Unknown";
}

export class TwentyQuestions implements TurnGame<TwentyQuestionsState> {
  readonly name = "twenty_questions";
  readonly seatNames = ["questioner", "answerer"] as const;

  constructor(readonly rules: TwentyQuestionsRules) {
    if (rules.maxQuestions < 1) throw new RangeError(`twenty_questions: max_questions=${rules.maxQuestions} must be at least 1`);
  }

  initialState(secret: string): TwentyQuestionsState {
    if (!this.rules.table.nouns.includes(secret)) throw new Error(`twenty_questions: secret ${JSON.stringify(secret)} is not in the table`);
    return { secret, asked: 0, wrongGuesses: 0, found: false, toMove: 0 };
  }

  toMove(state: TwentyQuestionsState): Seat {
    return state.toMove;
  }

  play(state: TwentyQuestionsState, seat: Seat, text: string): PlayResult<TwentyQuestionsState> {
    if (seat === 1) return { ok: true, state: { ...state, toMove: 0 }, summary: text.trim() };
    if (text.trim() === "") return { ok: false, error: "an empty question" };
    const q = parseQuestion(text, this.rules.table);
    const asked = state.asked + 1;
    if (q.kind === "guess") {
      const found = q.noun === state.secret;
      return { ok: true, state: { ...state, asked, found, wrongGuesses: state.wrongGuesses + (found ? 0 : 1), toMove: 1 }, summary: `Guess: ${q.noun}` };
    }
    return { ok: true, state: { ...state, asked, toMove: 1 }, summary: text.trim() };
  }

  outcome(state: TwentyQuestionsState): GameEnd | null {
    if (state.found) return { winner: 0, reason: "found" };
    // The answerer's reply to the last question is still heard before the game ends.
    if (state.toMove === 1) return null;
    if (this.rules.maxGuesses !== null && state.wrongGuesses >= this.rules.maxGuesses) return { winner: 1, reason: "wrong_guess" };
    if (state.asked >= this.rules.maxQuestions) return { winner: 1, reason: "out_of_questions" };
    return null;
  }

  /** 1 for finding the secret, less `questionPenalty` per question before the guess; 0 otherwise. */
  reward(state: TwentyQuestionsState, end: GameEnd, seat: Seat): number {
    if (seat !== 0 || end.winner !== 0) return 0;
    return Math.max(0, 1 - this.rules.questionPenalty * (state.asked - 1));
  }

  outcomeMetrics(state: TwentyQuestionsState, end: GameEnd, seat: Seat): Metrics {
    if (seat !== 0) return {};
    return {
      correct: end.winner === 0 ? 1 : 0,
      questions: state.asked,
      out_of_questions: end.reason === "out_of_questions" ? 1 : 0,
      wrong_guess_end: end.reason === "wrong_guess" ? 1 : 0,
    };
  }

  systemPrompt(state: TwentyQuestionsState, seat: Seat): string {
    const { table, maxQuestions, maxGuesses } = this.rules;
    if (seat === 1) {
      return `You are the answerer in twenty questions. The secret is ${state.secret}. Answer each question with Yes or No. If the guess is ${state.secret}, answer Correct.`;
    }
    const guesses = maxGuesses === 1 ? "You get one guess." : maxGuesses === null ? "" : `You get ${maxGuesses} guesses.`;
    return `Twenty questions. The secret is one of: ${table.nouns.join(", ")}. Ask Yes/No questions like "Is it ${table.attributes[0]}?" about: ${table.attributes.join(", ")}. Then guess with "Guess: <name>". ${guesses} You have ${maxQuestions} turns.`
      .replace(/\s+/g, " ")
      .trim();
  }

  turnPrompt(state: TwentyQuestionsState, seat: Seat, lastMove: MoveRecord | null): string {
    if (seat === 1) return lastMove?.text.trim() ?? "";
    const left = this.rules.maxQuestions - state.asked;
    const head = lastMove === null ? "Ask your first question." : `${lastMove.summary}.`;
    return `${head} ${left} ${left === 1 ? "turn" : "turns"} left.`;
  }

  endPrompt(state: TwentyQuestionsState, seat: Seat, end: GameEnd, lastMove: MoveRecord): string {
    if (seat === 1) return end.winner === 0 ? "Found." : `Not found: it was ${state.secret}.`;
    if (end.reason === "forfeit") return `No answer to that. It was ${state.secret}.`;
    if (end.winner === 0) return `Correct! It was ${state.secret}.`;
    return `${lastMove.seat === 1 ? `${lastMove.summary}. ` : ""}Game over: it was ${state.secret}.`;
  }

  retryPrompt(_state: TwentyQuestionsState, _seat: Seat, error: string): string {
    return `That is not a question (${error}). Ask again.`;
  }
}
