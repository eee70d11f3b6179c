// The search_tool recipe's task (the cookbook's Search-R1 style search_tool, offline): a question
// about the shipped synthetic world, a `search` tool over its documents (BM25, src/toolUse/tools/
// documentSearch.ts), and a final reply "Answer: …" graded as the cookbook does (src/grading's
// text answers: exact match after normalisation; F1 logged too). reward = format_coef·(format − 1)
// + correct. Also the warm-up's transcripts, about places of their own: they teach the call
// `<call>search PLACE ATTRIBUTE</call>` and copying the answer out of the result, and demonstrate
// the decision to search in only a chosen share of them.
import { z } from "zod";
import { Prng } from "../data/synthetic/prng.ts";
import { type SearchNameStyle, type SearchQA, factDocuments, factQuestion, generateSearchFacts } from "../data/synthetic/searchCorpus.ts";
import { readJsonlRecords } from "../files/jsonlInput.ts";
import { gradeTextAnswer } from "../grading/index.ts";
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import { EnvGroupBuilder, type Env, type RLDataset } from "../rl/types.ts";
import { seededShuffle } from "../data/shuffle.ts";
import { SupervisedDatasetFromRows } from "../supervised/data.ts";
import type { SupervisedDatasetBuilder } from "../supervised/types.ts";
import { warmupDatum, type WarmupRow } from "./additionTask.ts";
import { AgentToolEnv, answerText } from "./agentToolEnv.ts";
import { textToolCallShort, toolCallFormatFor } from "./callFormat.ts";
import type { RolloutConfig } from "./rolloutLimits.ts";
import { toolSpec, type Tool } from "./tool.ts";
import { DocumentIndex, formatSearchResult } from "./tools/documentSearch.ts";

export const SEARCH_SYSTEM_PROMPT = "Search, then reply with Answer: and the answer.";
/** Short on purpose: the declaration is in every sequence, and the tiny model pays for each token. */
export const SEARCH_TOOL_DESCRIPTION = "finds facts";

const SearchQASchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  question: z.string().min(1),
  answers: z.array(z.string()).min(1),
  query: z.string().optional(),
});

export function readSearchQA(file: string): SearchQA[] {
  return readJsonlRecords(file, SearchQASchema, '{"id", "question", "answers": [...], "query"?}').map((r) => ({ ...r, query: r.query ?? r.question }));
}

export interface SearchEnvOptions {
  renderer: Renderer;
  search: Tool;
  rollout: RolloutConfig;
  formatCoef: number;
  maxGenerationTokens: number;
}

export class SearchGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly qa: SearchQA,
    readonly groupSize: number,
    readonly options: SearchEnvOptions,
  ) {
    super();
  }

  async makeEnvs(): Promise<Env[]> {
    const o = this.options;
    return Array.from(
      { length: this.groupSize },
      () =>
        new AgentToolEnv({
          renderer: o.renderer,
          tools: [o.search],
          systemPrompt: SEARCH_SYSTEM_PROMPT,
          task: [{ role: "user", content: this.qa.question }],
          rollout: o.rollout,
          maxGenerationTokens: o.maxGenerationTokens,
          grade: (answer) => {
            const g = gradeTextAnswer(answerText(answer), this.qa.answers);
            return { reward: o.formatCoef * (g.format - 1) + g.correct, metrics: { correct: g.correct, f1: g.f1, format: g.format } };
          },
        }),
    );
  }

  override loggingTags(): string[] {
    return ["search"];
  }
}

/** Questions cut into batches of groups, reshuffled with the seed (fixed order per seed). */
export class SearchDataset implements RLDataset {
  private readonly order: readonly SearchQA[];

  constructor(
    questions: readonly SearchQA[],
    readonly batchSize: number,
    readonly groupSize: number,
    readonly options: SearchEnvOptions,
    seed: number | null,
  ) {
    this.order = seed === null ? questions : seededShuffle(questions, seed);
  }

  get length(): number {
    return Math.floor(this.order.length / this.batchSize);
  }

  getBatch(index: number): EnvGroupBuilder[] {
    return this.order.slice(index * this.batchSize, (index + 1) * this.batchSize).map((qa) => new SearchGroupBuilder(qa, this.groupSize, this.options));
  }
}

/** One warm-up episode: search, read the result, answer; or answer without searching. */
export function searchWarmupTranscript(renderer: Renderer, search: Tool, qa: SearchQA, result: string, useTool: boolean): Message[] {
  const format = toolCallFormatFor(renderer);
  const head: Message[] = [...format.declareTools([toolSpec(search)], SEARCH_SYSTEM_PROMPT), { role: "user", content: qa.question }];
  const answer: Message = { role: "assistant", content: `Answer: ${qa.answers[0]}` };
  if (!useTool) return [...head, answer];
  const call = { type: "function" as const, id: "functions.search:0", function: { name: "search", arguments: JSON.stringify({ query: qa.query }) } };
  const callMessage: Message =
    format.kind === "text"
      ? { role: "assistant", content: textToolCallShort("search", qa.query), tool_calls: [call] }
      : { role: "assistant", content: "", tool_calls: [call] };
  return [...head, callMessage, format.toolResultMessage(call, result), answer];
}

export interface SearchWarmupOptions {
  renderer: Renderer;
  search: Tool;
  examples: number;
  batchSize: number;
  /** Share of transcripts that search (the rest answer directly, which only memory could get right). */
  toolShare: number;
  /** Share of searching transcripts whose opening token, the decision to search, is trained. */
  decisionShare: number;
  seed: number;
  /** The search tool's results per query and their length cap, as the RL run's tool has them. */
  k: number;
  maxChars: number;
  /** How the warm-up's places and answers are named (the RL corpus's style). */
  nameStyle?: SearchNameStyle;
  /** Places the warm-up must not be about (the RL questions' places). */
  avoidPlaces?: readonly string[];
}

/** Places in one warm-up world (180 facts); the next examples come from a fresh world with its own corpus. */
const WARMUP_WORLD_PLACES = 60;

/** The places questions ask about ("What is the capital of apple tiger?" → "apple tiger"). */
export function placesAskedAbout(questions: readonly SearchQA[]): string[] {
  return questions.flatMap((q) => /\bof (.+)\?$/.exec(q.question)?.[1] ?? []);
}

/**
 * Warm-up rows over places of their own (the warm-up's facts never answer an RL question). The
 * places come in small worlds of their own corpus, each searched the way the RL run's tool searches
 * the shipped one, so that the facts keep changing and only reading the result pays.
 */
export function searchWarmupRows(options: SearchWarmupOptions): WarmupRow[] {
  const rng = new Prng(options.seed * 7919 + 29);
  const perWorld = WARMUP_WORLD_PLACES * 3;
  const worlds = Math.max(1, Math.ceil(options.examples / perWorld));
  const rows: WarmupRow[] = [];
  for (let w = 0; w < worlds; w++) {
    const facts = generateSearchFacts(options.seed * 104_729 + 99_991 + w, WARMUP_WORLD_PLACES, options.nameStyle, options.avoidPlaces);
    const index = new DocumentIndex(factDocuments(facts));
    for (const fact of rng.shuffled(facts).slice(0, options.examples - rows.length)) {
      const useTool = rng.chance(options.toolShare);
      const qa = factQuestion(fact);
      const result = formatSearchResult(index.search(qa.query, options.k), options.maxChars);
      rows.push({
        messages: searchWarmupTranscript(options.renderer, options.search, qa, result, useTool),
        trainDecision: !useTool || rng.chance(options.decisionShare),
      });
    }
  }
  return rows;
}

export function searchWarmupDatasetBuilder(options: SearchWarmupOptions): SupervisedDatasetBuilder {
  return {
    build: async () => ({
      train: new SupervisedDatasetFromRows(searchWarmupRows(options), options.batchSize, (row) => warmupDatum(options.renderer, row)),
      test: null,
    }),
  };
}
