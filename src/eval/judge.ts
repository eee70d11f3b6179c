// LLM-as-judge grading for open-ended answers (off unless a judge is configured): a sampling
// client reads the question, the reference and the response under a rubric and ends its reply
// with "GRADE: CORRECT" or "GRADE: INCORRECT" (optionally "SCORE: <0-10>").
import { getTextContent } from "../renderers/content.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { modelInputLength } from "../tinker/modelInput.ts";
import type { ModelInput } from "../tinker/types.ts";
import type { EvalRenderer } from "./renderer.ts";

export const DEFAULT_RUBRIC = [
  "You are grading a model's answer against a reference answer.",
  "The answer is CORRECT if it states the same final result as the reference, even if worded differently;",
  "otherwise it is INCORRECT. Give a one-sentence reason, then a line `SCORE: <0-10>` for how good the answer is,",
  "then a final line exactly `GRADE: CORRECT` or `GRADE: INCORRECT`.",
].join(" ");

export interface JudgeOptions {
  samplingClient: SamplingClient;
  renderer: EvalRenderer;
  rubric?: string;
  maxTokens?: number;
  temperature?: number;
  /** The judge model's context window: max_tokens shrinks so the prompt and the verdict fit. */
  contextWindow?: number;
}

export interface JudgeVerdict {
  correct: boolean;
  /** SCORE / 10 when the judge gave one, else 1 or 0 from the grade. */
  score: number;
  explanation: string;
}

export function judgePrompt(rubric: string, question: string, reference: string, response: string): string {
  return `${rubric}\n\n[Question]\n${question}\n\n[Reference answer]\n${reference}\n\n[Model answer]\n${response}\n\n[Your grading]`;
}

/** Reads the judge's reply; a reply without a GRADE line counts as incorrect. */
export function parseJudgeReply(reply: string): JudgeVerdict {
  const grades = [...reply.matchAll(/GRADE\s*:\s*\**\s*(CORRECT|INCORRECT)/gi)];
  const correct = grades.length > 0 && grades[grades.length - 1]![1]!.toUpperCase() === "CORRECT";
  const scores = [...reply.matchAll(/SCORE\s*:\s*(\d+(?:\.\d+)?)/gi)];
  const raw = scores.length > 0 ? Number(scores[scores.length - 1]![1]) : null;
  const score = raw !== null && raw >= 0 && raw <= 10 ? raw / 10 : correct ? 1 : 0;
  return { correct, score, explanation: reply.trim() };
}

export class LLMJudge {
  readonly rubric: string;

  constructor(readonly options: JudgeOptions) {
    this.rubric = options.rubric ?? DEFAULT_RUBRIC;
  }

  private maxTokensFor(prompt: ModelInput): number {
    const wanted = this.options.maxTokens ?? 512;
    if (this.options.contextWindow === undefined) return wanted;
    const room = this.options.contextWindow - modelInputLength(prompt);
    if (room < 1) throw new Error(`judge prompt of ${modelInputLength(prompt)} tokens fills the judge's context window (${this.options.contextWindow})`);
    return Math.min(wanted, room);
  }

  /** The judge model's reply to one user message (greedy unless a temperature is set). */
  async reply(content: string): Promise<string> {
    const { renderer, samplingClient } = this.options;
    const prompt = renderer.buildGenerationPrompt([{ role: "user", content }]);
    const out = await samplingClient.sample(prompt, 1, {
      stop: renderer.getStopSequences(),
      max_tokens: this.maxTokensFor(prompt),
      temperature: this.options.temperature ?? 0,
    });
    const seq = out.sequences[0];
    if (seq === undefined) throw new Error("judge sampler returned no sequence");
    return getTextContent(renderer.parseResponse(seq.tokens).message);
  }

  async judge(question: string, reference: string, response: string): Promise<JudgeVerdict> {
    return parseJudgeReply(await this.reply(judgePrompt(this.rubric, question, reference, response)));
  }
}
