// The cookbook's rubric environment: the policy answers a conversation; a grader model reads the
// whole conversation and one rubric item at a time, writes its verdict, and the score it wraps in
// the item's format (default <score>…</score>) is extracted; reward = the sum of the items' scores.
// The grader is any sampling client (a base model, a checkpoint, another server) behind
// src/eval/judge.ts's LLMJudge. Every verdict is the transcript's closing message, so the TUI and
// `cookbook play rubric` show what the grader said and why the reward is what it is.
import { z } from "zod";
import { readJsonlRecords } from "../../files/jsonlInput.ts";
import { messageText, type Message, type RLRenderer } from "../../renderers/policyRenderer.ts";
import { emptyModelInput } from "../tokenSeq.ts";
import {
  EnvGroupBuilder,
  EpisodeEndReason,
  stopMetric,
  type Action,
  type ActionExtra,
  type Env,
  type InitialObservation,
  type RLDataset,
  type StepResult,
} from "../types.ts";

export const DEFAULT_EXTRACTION_REGEX = "<score>(.*)</score>";
export const DEFAULT_GRADER_FORMAT = "Please output your score between 0 and 1 wrapped in <score> ... </score>";

const RubricItemSchema = z.object({
  rubric_str: z.string().min(1),
  extraction_regex: z.string().default(DEFAULT_EXTRACTION_REGEX),
  grader_output_format_instruction: z.string().default(DEFAULT_GRADER_FORMAT),
});
export type RubricItem = z.output<typeof RubricItemSchema>;

const RubricDatapointSchema = z.object({
  convo: z.array(z.object({ role: z.string().min(1), content: z.string() })).min(1),
  rubric_items: z.array(RubricItemSchema).min(1),
});
export type RubricDatapoint = z.output<typeof RubricDatapointSchema>;

export function readRubricJsonl(file: string): RubricDatapoint[] {
  return readJsonlRecords(
    file,
    RubricDatapointSchema,
    '{"convo": [{"role","content"}...], "rubric_items": [{"rubric_str", "extraction_regex"?, "grader_output_format_instruction"?}]}',
  );
}

/** The conversation as the grader reads it: "Human: …" and "Chatbot: …" turns. */
export function flattenConversation(convo: readonly { role: string; content: string }[]): string {
  return convo.map((m) => `${m.role === "assistant" ? "Chatbot" : "Human"}: ${m.content}`).join("\n\n");
}

export function graderPrompt(convo: readonly { role: string; content: string }[], item: RubricItem): string {
  return [
    "Grade the conversation between a human and a chatbot by the rubric.",
    `<conversation>\n${flattenConversation(convo)}\n</conversation>`,
    `<rubric>\n${item.rubric_str}\n</rubric>`,
    item.grader_output_format_instruction,
  ].join("\n");
}

/** The score the item's regex captures in the grader's reply; 0 when there is none or it is not a number. */
export function extractScore(item: RubricItem, reply: string): number | null {
  let re: RegExp;
  try {
    re = new RegExp(item.extraction_regex, "s");
  } catch {
    return null;
  }
  const match = re.exec(reply);
  const value = match?.[1] === undefined ? Number.NaN : Number(match[1].trim());
  return Number.isFinite(value) ? value : null;
}

/** Anything that answers a grader prompt: LLMJudge.reply, or a fake in tests. */
export interface RubricGrader {
  reply(prompt: string): Promise<string>;
}

export interface RubricVerdict {
  item: RubricItem;
  reply: string;
  /** null: the reply had no score the regex could read (counted as 0). */
  score: number | null;
}

export async function gradeByRubric(
  grader: RubricGrader,
  convo: readonly { role: string; content: string }[],
  items: readonly RubricItem[],
): Promise<RubricVerdict[]> {
  return Promise.all(
    items.map(async (item) => {
      const reply = await grader.reply(graderPrompt(convo, item));
      return { item, reply, score: extractScore(item, reply) };
    }),
  );
}

export class RubricEnv implements Env {
  constructor(
    readonly renderer: RLRenderer,
    readonly datapoint: RubricDatapoint,
    readonly grader: RubricGrader,
  ) {}

  private conversation(): Message[] {
    return this.datapoint.convo.map((m) => ({ role: m.role, content: m.content }));
  }

  async initialObservation(): Promise<InitialObservation> {
    return { observation: this.renderer.buildGenerationPrompt(this.conversation()), stopCondition: this.renderer.getStopSequences() };
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    const { message } = this.renderer.parseResponse(action);
    const reply = messageText(message);
    const graded = [...this.datapoint.convo, { role: "assistant", content: reply }];
    const verdicts = await gradeByRubric(this.grader, graded, this.datapoint.rubric_items);
    const reward = verdicts.reduce((sum, v) => sum + (v.score ?? 0), 0);
    const report = verdicts
      .map((v, i) => `rubric ${i + 1}: ${v.item.rubric_str}\nverdict: ${v.reply.trim() || "(empty)"}\nscore: ${v.score ?? "none found (0)"}`)
      .join("\n\n");
    return {
      reward,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.renderer.getStopSequences(),
      metrics: {
        judge_score: reward,
        judge_unreadable: verdicts.filter((v) => v.score === null).length / verdicts.length,
        [stopMetric(extra.stopReason === "length" ? EpisodeEndReason.MAX_TOKENS : EpisodeEndReason.COMPLETED)]: 1,
      },
      logs: Object.fromEntries(verdicts.map((v, i) => [`judge_${i + 1}`, `${v.score ?? "none"}: ${v.reply.trim().slice(0, 200)}`])),
      messages: [...this.conversation(), { ...message, role: message.role || "assistant" }, { role: "environment", name: "judge", content: report }],
    };
  }
}

export class RubricGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly renderer: RLRenderer,
    readonly datapoint: RubricDatapoint,
    readonly grader: RubricGrader,
    readonly groupSize: number,
  ) {
    super();
  }
  async makeEnvs(): Promise<Env[]> {
    return Array.from({ length: this.groupSize }, () => new RubricEnv(this.renderer, this.datapoint, this.grader));
  }
  override loggingTags(): string[] {
    return ["rubric"];
  }
}

export class RubricDataset implements RLDataset {
  constructor(
    readonly datapoints: readonly RubricDatapoint[],
    readonly renderer: RLRenderer,
    readonly grader: RubricGrader,
    readonly batchSize: number,
    readonly groupSize: number,
  ) {}
  get length(): number {
    return Math.floor(this.datapoints.length / this.batchSize);
  }
  getBatch(index: number): EnvGroupBuilder[] {
    return this.datapoints
      .slice(index * this.batchSize, (index + 1) * this.batchSize)
      .map((d) => new RubricGroupBuilder(this.renderer, d, this.grader, this.groupSize));
  }
}
