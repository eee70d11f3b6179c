// How well tiny-chat copies search_tool names of a style (docs/rl.md "Search tool"): builds a world
// of that style, optionally runs the recipe's warm-up on it, then on held-out questions measures the
// greedy call (copying the place out of the question into the query), the greedy answer after the
// right call and the real search result (copying the answer out of the result) and the answer's
// loss per token.
//   COOKBOOK_HOME=… node --import tsx scripts/probeSearchCopy.ts <words|syllables> <warm-up steps, 0 = base model> [n=40] [k=2] [out=/tmp/search-probe]
import { mkdirSync } from "node:fs";
import path from "node:path";
import { type SearchNameStyle, generateSearchWorld, SEARCH_NAME_STYLES } from "../src/data/synthetic/searchCorpus.ts";
import { resolveRendererName } from "../src/modelInfo.ts";
import { getRenderer } from "../src/renderers/registry.ts";
import { createServiceClient } from "../src/service.ts";
import { supervisedWarmupOn } from "../src/supervised/warmup.ts";
import { appendTokens } from "../src/tinker/modelInput.ts";
import { getTokenizer } from "../src/tokenizers/index.ts";
import { SEARCH_TOOL_DESCRIPTION, placesAskedAbout, searchWarmupDatasetBuilder, searchWarmupTranscript } from "../src/toolUse/searchTask.ts";
import { DocumentIndex, documentSearchTool, formatSearchResult } from "../src/toolUse/tools/documentSearch.ts";

const [styleArg = "words", stepsArg = "0", nArg = "40", kArg = "2", out = "/tmp/search-probe"] = process.argv.slice(2);
if (!(SEARCH_NAME_STYLES as readonly string[]).includes(styleArg)) throw new Error(`style must be one of ${SEARCH_NAME_STYLES.join(", ")}, got ${styleArg}`);
const style = styleArg as SearchNameStyle;
const [steps, n, k] = [Number(stepsArg), Number(nArg), Number(kArg)];
const model = "tiny-chat";
const maxChars = 200;
const tokenizer = await getTokenizer(model);
const renderer = getRenderer(resolveRendererName(model, null), tokenizer);
const world = generateSearchWorld(20_261_126, 160, 0.15, style);
const index = new DocumentIndex(world.documents);
const search = documentSearchTool(index, { k, maxChars, description: SEARCH_TOOL_DESCRIPTION });
const service = await createServiceClient();
let samplerPath: string | null = null;
const started = Date.now();
if (steps > 0) {
  const logPath = path.join(out, `${style}-k${k}-${steps}`);
  mkdirSync(out, { recursive: true });
  const spec = {
    log_path: logPath,
    model_name: model,
    renderer_name: null,
    base_url: null,
    lora_rank: 64,
    seed: 0,
    steps,
    batch_size: 16,
    learning_rate: 5e-3,
    data: `probe ${style} k=${k}`,
  };
  const done = await supervisedWarmupOn(spec, (r) =>
    searchWarmupDatasetBuilder({
      renderer: r,
      search,
      examples: steps * 16,
      batchSize: 16,
      toolShare: 0.9,
      decisionShare: 0.05,
      seed: 0,
      k,
      maxChars,
      nameStyle: style,
      avoidPlaces: placesAskedAbout([...world.train, ...world.test]),
    }),
  );
  samplerPath = done.samplerPath;
}
const warmupSeconds = (Date.now() - started) / 1000;
const sampler =
  samplerPath === null ? await service.createSamplingClient({ baseModel: model }) : await service.createSamplingClient({ modelPath: samplerPath });
const enc = (s: string): number[] => tokenizer.encode(s, { addSpecialTokens: false });
let callExact = 0,
  calls = 0,
  copies = 0,
  nll = 0,
  tokens = 0;
const examples: string[] = [];
const questions = world.test.slice(0, n);
for (const qa of questions) {
  const result = formatSearchResult(index.search(qa.query, k), maxChars);
  const t = searchWarmupTranscript(renderer, search, qa, result, true);
  // The call's words after a forced opening (the decision to search is RL's to learn).
  const callPrompt = appendTokens(renderer.buildGenerationPrompt(t.slice(0, 2)), enc(" <call>search"));
  const c = await sampler.sample(callPrompt, 1, { max_tokens: 24, temperature: 1e-6, stop: ["\n\nUser:", "</call>"] });
  const call = tokenizer.decode(c.sequences[0]!.tokens).replace("</call>", "").trim();
  if (c.sequences[0]!.stop_reason === "stop") calls++;
  if (call === qa.query) callExact++;
  const answerPrompt = renderer.buildGenerationPrompt(t.slice(0, 4));
  const a = await sampler.sample(answerPrompt, 1, { max_tokens: 16, temperature: 1e-6, stop: ["\n\nUser:"] });
  const answer = tokenizer.decode(a.sequences[0]!.tokens).replace("\n\nUser:", "").trim();
  if (answer === `Answer: ${qa.answers[0]}`) copies++;
  const gold = enc(` Answer: ${qa.answers[0]}`);
  const head = enc(" Answer:").length;
  const lps = await sampler.computeLogprobs(appendTokens(answerPrompt, gold));
  const tail = lps.slice(-(gold.length - head)).map((x) => -(x ?? 0));
  nll += tail.reduce((s, x) => s + x, 0);
  tokens += tail.length;
  if (examples.length < 5) examples.push(`${qa.question} | call: ${call} | result: ${result.replaceAll("\n", " / ")} | answer: ${answer}`);
}
console.log(
  JSON.stringify({
    style,
    warmup_steps: steps,
    k,
    n: questions.length,
    warmup_seconds: Math.round(warmupSeconds),
    answer_tokens: +(tokens / questions.length).toFixed(2),
    answer_nll_per_token: +(nll / tokens).toFixed(3),
    greedy_copy_answer: copies / questions.length,
    greedy_call_closed: calls / questions.length,
    greedy_call_exact: callExact / questions.length,
  }),
);
for (const e of examples) console.log(e);
process.exit(0);
