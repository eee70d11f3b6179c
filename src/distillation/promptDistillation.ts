// Prompt distillation: a teacher reading a long system prompt answers a set of prompts; its
// answers, without the system prompt, become a supervised data set for the student, which so
// learns to behave as if the prompt were there. Agreement — how often the student without the
// prompt gives exactly the teacher's answer with it — says how much of the prompt it absorbed.
import * as fs from "node:fs";
import * as path from "node:path";
import { getTextContent } from "../renderers/content.ts";
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import type { SamplingClientEvaluator } from "../eval/evaluators.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { mapWithConcurrency } from "../async/concurrency.ts";

export interface GreedyOptions {
  maxTokens: number;
  concurrency: number;
}

/** The greedy (temperature 0) answer to each prompt, with `prefix` (e.g. a system prompt) before it. */
export async function greedyAnswers(
  client: SamplingClient,
  renderer: Renderer,
  prefix: readonly Message[],
  prompts: readonly Message[][],
  options: GreedyOptions,
): Promise<string[]> {
  const stop = renderer.getStopSequences();
  return mapWithConcurrency(prompts, options.concurrency, async (prompt) => {
    const input = renderer.buildGenerationPrompt([...prefix, ...prompt]);
    const response = await client.sample(input, 1, { max_tokens: options.maxTokens, temperature: 0, stop });
    const sequence = response.sequences[0];
    if (sequence === undefined) throw new Error("greedyAnswers: the sampler returned no sequence");
    return getTextContent(renderer.parseResponse(sequence.tokens).message).trim();
  });
}

/** The labelled conversation the student trains on: the prompt (no system prompt) and the teacher's answer. */
export function labelledConversation(prompt: readonly Message[], answer: string): Message[] {
  return [...prompt, { role: "assistant", content: answer }];
}

/** Writes `{"messages": [...]}` lines to `file` atomically (temp file + rename). */
export function writeConversationsJsonl(file: string, conversations: readonly Message[][]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, conversations.map((messages) => JSON.stringify({ messages })).join("\n") + "\n");
  fs.renameSync(tmp, file);
}

export interface AgreementResult {
  agreement: number;
  matches: number;
  total: number;
}

/** Fraction of prompts on which both answers are equal after trimming whitespace. */
export function agreement(student: readonly string[], teacher: readonly string[]): AgreementResult {
  if (student.length !== teacher.length) throw new Error(`agreement: ${student.length} student answers but ${teacher.length} teacher answers`);
  if (student.length === 0) throw new Error("agreement: no answers to compare");
  let matches = 0;
  for (let i = 0; i < student.length; i++) if (student[i]!.trim() === teacher[i]!.trim()) matches++;
  return { agreement: matches / student.length, matches, total: student.length };
}

/**
 * Single-turn prompts from conversations: every user message on its own, first occurrence
 * only, skipping any in `exclude` (e.g. the training prompts when building a held-out set).
 */
export function singleTurnPrompts(conversations: readonly Message[][], exclude: ReadonlySet<string> = new Set()): Message[][] {
  const seen = new Set<string>();
  const out: Message[][] = [];
  for (const messages of conversations) {
    for (const m of messages) {
      if (m.role !== "user") continue;
      const text = getTextContent(m);
      if (seen.has(text) || exclude.has(text)) continue;
      seen.add(text);
      out.push([{ role: "user", content: text }]);
    }
  }
  return out;
}

export interface AgreementEvaluatorOptions extends GreedyOptions {
  renderer: Renderer;
  /** Held-out prompts, without the system prompt. */
  prompts: readonly Message[][];
  /** The teacher's answers to them, with the system prompt. */
  teacherAnswers: readonly string[];
  /** Metric prefix (default "test/"). */
  prefix?: string;
}

/** Scores a sampler of the student: `test/agreement` with the prompted teacher on held-out prompts. */
export class AgreementEvaluator implements SamplingClientEvaluator {
  readonly kind = "sampling_client" as const;
  readonly name = "prompt_distillation_agreement";
  constructor(private readonly options: AgreementEvaluatorOptions) {
    if (options.prompts.length !== options.teacherAnswers.length) {
      throw new Error(`AgreementEvaluator: ${options.prompts.length} prompts but ${options.teacherAnswers.length} teacher answers`);
    }
  }

  async evaluate(samplingClient: SamplingClient): Promise<Record<string, number>> {
    const { renderer, prompts, teacherAnswers } = this.options;
    const answers = await greedyAnswers(samplingClient, renderer, [], prompts, this.options);
    return { [`${this.options.prefix ?? "test/"}agreement`]: agreement(answers, teacherAnswers).agreement };
  }
}
