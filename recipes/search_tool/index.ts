// Search tool (the cookbook's search_tool, Search-R1 style, offline): answer questions about a
// shipped synthetic world (scripts/makeSearchCorpus.ts: invented places, each with a capital, a
// river and a mayor, all named by pairs of common words) by calling `search` over its documents, a
// local BM25 index or an embedding model's (search_index=embedding), then replying "Answer: NAME".
// Graded as the cookbook grades: exact match after normalisation (F1 logged too); reward =
// format_coef·(format − 1) + correct. No model has seen these facts, so only a search finds an
// answer. tiny-chat has never seen a tool call and cannot copy, so a supervised warm-up on the
// warm-up's own invented places first teaches the call and copying the answer out of the result,
// but demonstrates the decision to search in only a small share (the tool_use recipe's design);
// RL then learns that searching pays. See docs/rl.md "Search tool" for measured runs.
import { z } from "zod";
import { ConfigError } from "../../src/config/errors.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { supervisedWarmupOn, warmupRunFields } from "../../src/supervised/warmup.ts";
import { answerOnlyRollout } from "../../src/toolUse/rolloutLimits.ts";
import { SEARCH_NAME_STYLES } from "../../src/data/synthetic/searchCorpus.ts";
import {
  SEARCH_TOOL_DESCRIPTION,
  SearchDataset,
  type SearchEnvOptions,
  placesAskedAbout,
  readSearchQA,
  searchWarmupDatasetBuilder,
} from "../../src/toolUse/searchTask.ts";
import { DocumentIndex, type SearchIndex, documentSearchTool, readDocuments } from "../../src/toolUse/tools/documentSearch.ts";
import { EmbeddingIndex, transformersEmbedder } from "../../src/toolUse/tools/embeddingSearch.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    corpus_path: z.string().default(fixtureDataPath("search_corpus.jsonl")).describe('Documents to search: JSONL of {"id", "title"?, "text"}'),
    train_path: z.string().default(fixtureDataPath("search_qa_train.jsonl")).describe('Questions: JSONL of {"id", "question", "answers": [...]}'),
    test_path: z.string().nullable().default(fixtureDataPath("search_qa_test.jsonl")).describe("Held-out questions (null = none)"),
    test_problems: z.number().int().min(0).default(61).describe("Held-out questions per evaluation (0 = no test set)"),
    search_index: z
      .enum(["bm25", "embedding"])
      .default("bm25")
      .describe("How documents are found: BM25 over words, or cosine similarity of embedding_model's vectors"),
    embedding_model: z
      .string()
      .nullable()
      .default(null)
      .describe("Feature-extraction model of search_index=embedding: a folder with onnx/model.onnx, a shipped name (tiny-embed) or a hub id"),
    search_k: z.number().int().positive().default(1).describe("Documents a search returns"),
    search_max_chars: z.number().int().positive().default(200).describe("Characters kept of each returned document"),
    format_coef: z.number().min(0).default(0.1).describe('Reward lost by a final reply without "Answer:"'),
    rollout_preset: z.enum(["simple", "agentic"]).default("simple").describe("Rollout limits and parse-error / termination-reward policies"),
    max_turns: z.number().int().positive().default(3).describe("Policy turns per episode (a search and the answer take two)"),
    tool_timeout_seconds: z.number().positive().default(5).describe("Budget of one search"),
    warmup_steps: z.number().int().min(0).default(600).describe("Supervised warm-up steps on transcripts about the warm-up's own places (0 = none)"),
    warmup_batch_size: z.number().int().positive().default(16).describe("Warm-up examples per step"),
    warmup_learning_rate: z.number().positive().default(5e-3).describe("Warm-up peak learning rate (linear decay)"),
    warmup_tool_share: z
      .number()
      .min(0)
      .max(1)
      .default(0.9)
      .describe("Share of warm-up transcripts that search and copy the answer (the rest answer directly)"),
    warmup_decision_share: z
      .number()
      .min(0)
      .max(1)
      .default(0.05)
      .describe("Share of searching warm-up transcripts whose opening token, the decision to search, is trained"),
    warmup_name_style: z
      .enum(SEARCH_NAME_STYLES)
      .default("words")
      .describe("How the warm-up's own places are named: word pairs as in the shipped corpus, or invented syllables"),
  }),
  {
    log_path: "/tmp/tinker-examples/search_tool",
    learning_rate: 2e-4,
    max_tokens: 24,
    lora_rank: 64,
    max_steps: 20,
    eval_every: 10,
    save_every: 10,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type SearchToolConfig = z.output<typeof configSchema>;

/** The index RL searches: BM25, or the embedding model's (built once and shared by every env). */
async function searchIndex(config: SearchToolConfig): Promise<SearchIndex> {
  const documents = readDocuments(config.corpus_path);
  if (config.search_index === "bm25") return new DocumentIndex(documents);
  if (config.embedding_model === null)
    throw new ConfigError("search_index=embedding needs embedding_model (a folder with onnx/model.onnx, tiny-embed, or a hub id)");
  return EmbeddingIndex.build(documents, await transformersEmbedder(config.embedding_model));
}

function searchTool(config: SearchToolConfig, index: SearchIndex) {
  return documentSearchTool(index, { k: config.search_k, maxChars: config.search_max_chars, description: SEARCH_TOOL_DESCRIPTION });
}

/** Every question of the run, held-out ones included (the warm-up stays off their places). */
function questionsOf(config: SearchToolConfig) {
  return [...readSearchQA(config.train_path), ...(config.test_path === null ? [] : readSearchQA(config.test_path))];
}

async function warmup(config: SearchToolConfig, context?: RecipeContext): Promise<string> {
  const data = {
    tool_share: config.warmup_tool_share,
    decision_share: config.warmup_decision_share,
    k: config.search_k,
    max_chars: config.search_max_chars,
    names: config.warmup_name_style,
  };
  const spec = {
    ...warmupRunFields(config),
    steps: config.warmup_steps,
    batch_size: config.warmup_batch_size,
    learning_rate: config.warmup_learning_rate,
    data: `search_tool transcripts ${JSON.stringify(data)}`,
  };
  // The warm-up's transcripts declare the tool; their results come from BM25 over their own worlds.
  const search = searchTool(config, new DocumentIndex([]));
  const done = await supervisedWarmupOn(
    spec,
    (renderer) =>
      searchWarmupDatasetBuilder({
        renderer,
        search,
        examples: config.warmup_steps * config.warmup_batch_size,
        batchSize: config.warmup_batch_size,
        toolShare: config.warmup_tool_share,
        decisionShare: config.warmup_decision_share,
        seed: config.seed,
        k: config.search_k,
        maxChars: config.search_max_chars,
        nameStyle: config.warmup_name_style,
        avoidPlaces: placesAskedAbout(questionsOf(config)),
      }),
    context,
  );
  return done.statePath;
}

/** The environments the loop trains in; `cookbook play search_tool` puts a person in them. */
export function environments(config: SearchToolConfig, { renderer }: RLRecipeSetup): RLDatasetBuilder {
  const rollout = answerOnlyRollout(config.rollout_preset, config.max_turns, config.tool_timeout_seconds);
  return {
    async build() {
      const options: SearchEnvOptions = {
        renderer,
        search: searchTool(config, await searchIndex(config)),
        rollout,
        formatCoef: config.format_coef,
        maxGenerationTokens: config.max_tokens,
      };
      const train = new SearchDataset(readSearchQA(config.train_path), config.groups_per_batch, config.group_size, options, config.seed);
      if (train.length === 0) throw new Error(`search_tool: fewer questions in ${config.train_path} than groups_per_batch=${config.groups_per_batch}`);
      const testPath = config.test_path;
      const held = testPath === null || config.test_problems === 0 ? [] : readSearchQA(testPath).slice(0, config.test_problems);
      return { train, test: held.length === 0 ? null : new SearchDataset(held, held.length, 1, options, null) };
    },
  };
}

async function main(config: SearchToolConfig, context?: RecipeContext): Promise<void> {
  const loadCheckpointPath = config.load_checkpoint_path ?? (config.warmup_steps > 0 ? await warmup(config, context) : null);
  await runRLRecipe({ ...config, load_checkpoint_path: loadCheckpointPath }, (setup) => environments(config, setup), context);
}

export default defineRecipe({
  name: "search_tool",
  description:
    "Search-R1 style RL: answer questions about a shipped invented world by calling a local BM25 search over its documents (after a warm-up that teaches the call), graded by exact match",
  configSchema,
  main,
});
