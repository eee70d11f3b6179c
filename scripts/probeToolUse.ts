// What a tool_use policy gets right, piece by piece (docs/rl.md "Tool use"): for n problems of the
// recipe, the loss and greedy accuracy of writing the call (copying the operands from the
// question) and of the answer after a correct call and result (copying the result), then whole
// episodes through the recipe's environment sampled at temperature 1.
//   COOKBOOK_HOME=… node --import tsx scripts/probeToolUse.ts <tinker://…/weights/final | -> [n=50] [op=+] [digits=3] [model=tiny-chat]
// `-` probes the base model; a warm-up's state path is in <log_path>-warmup/checkpoints.jsonl.
import { createServiceClient } from "../src/service.ts";
import { getRenderer } from "../src/renderers/registry.ts";
import { resolveRendererName } from "../src/modelInfo.ts";
import { getTokenizer } from "../src/tokenizers/index.ts";
import { Prng } from "../src/data/synthetic/prng.ts";
import { AdditionToolGroupBuilder, problemAnswer, sampleProblem, warmupTranscript, type TaskOp } from "../src/toolUse/additionTask.ts";
import { simpleRolloutConfig } from "../src/toolUse/rolloutLimits.ts";
import { appendTokens } from "../src/tinker/modelInput.ts";
import type { SamplingClient } from "../src/tinker/clients.ts";

const [pathArg = "-", nArg = "50", opArg = "+", digitsArg = "3", modelName = "tiny-chat"] = process.argv.slice(2);
const n = Number(nArg);
const digits = Number(digitsArg);
if (!Number.isInteger(n) || n <= 0 || !Number.isInteger(digits) || digits <= 0)
  throw new Error(`n and digits must be positive integers, got ${nArg} and ${digitsArg}`);
if (opArg !== "+" && opArg !== "-") throw new Error(`op must be + or -, got ${JSON.stringify(opArg)}`);
const op: TaskOp = opArg;
const tokenizer = await getTokenizer(modelName);
const renderer = getRenderer(resolveRendererName(modelName, null), tokenizer);
const service = await createServiceClient();
const sampler: SamplingClient =
  pathArg === "-" ? await service.createSamplingClient({ baseModel: modelName }) : await service.createSamplingClient({ modelPath: pathArg });
const enc = (s: string): number[] => tokenizer.encode(s, { addSpecialTokens: false });

async function nllOf(prefixMessages: Parameters<typeof renderer.buildGenerationPrompt>[0], continuation: string): Promise<number[]> {
  const prompt = renderer.buildGenerationPrompt(prefixMessages);
  const cont = enc(continuation);
  const lps = await sampler.computeLogprobs(appendTokens(prompt, cont));
  return lps.slice(-cont.length).map((x) => -(x ?? 0));
}

const rng = new Prng(12345);
let callNll = 0,
  callTok = 0,
  ansNll = 0,
  ansTok = 0,
  greedyCopy = 0,
  greedyCall = 0,
  episodeCorrect = 0,
  episodeCalled = 0,
  callRight = 0;
const examples: string[] = [];
for (let i = 0; i < n; i++) {
  const p = sampleProblem(rng, digits, op);
  const t = warmupTranscript(renderer, p, true);
  const answer = String(problemAnswer(p));
  const c = await nllOf(t.slice(0, 2), ` ${String(t[2]!.content)}`);
  callNll += c.reduce((a, b) => a + b, 0);
  callTok += c.length;
  const a = await nllOf(t.slice(0, 4), ` ${answer}\n\nUser:`);
  const digitsOnly = a.slice(0, enc(` ${answer}`).length);
  ansNll += digitsOnly.reduce((x, y) => x + y, 0);
  ansTok += digitsOnly.length;
  // Greedy answer after a correct call and result (pure copy).
  const prompt = renderer.buildGenerationPrompt(t.slice(0, 4));
  const s = await sampler.sample(prompt, 1, { max_tokens: 12, temperature: 1e-6, stop: ["\n\nUser:"] });
  const got = tokenizer.decode(s.sequences[0]!.tokens).replace("\n\nUser:", "").trim();
  if (got === answer) greedyCopy++;
  // Greedy call.
  const s2 = await sampler.sample(renderer.buildGenerationPrompt(t.slice(0, 2)), 1, { max_tokens: 30, temperature: 1e-6, stop: ["\n\nUser:", "</call>"] });
  const call = tokenizer.decode(s2.sequences[0]!.tokens).trim();
  if (call.startsWith("<call>")) greedyCall++;
  if (call === String(t[2]!.content)) callRight++;
  // Full episode at temperature 1 through the env.
  const [env] = await new AdditionToolGroupBuilder(renderer, p, 1, simpleRolloutConfig({ maxTurns: 3 }), 40).makeEnvs();
  const first = await env!.initialObservation();
  if ("reward" in first) continue;
  let ob = first.observation;
  let stop = first.stopCondition;
  const turns: string[] = [];
  for (let turn = 0; turn < 3; turn++) {
    const r = await sampler.sample(ob, 1, { max_tokens: 40, temperature: 1, stop: stop as string[] });
    const seq = r.sequences[0]!;
    turns.push(tokenizer.decode(seq.tokens));
    const step = await env!.step(seq.tokens, { stopReason: seq.stop_reason });
    if (step.episodeDone) {
      episodeCorrect += step.metrics?.["correct"] ?? 0;
      episodeCalled += step.metrics?.["called_tool"] ?? 0;
      break;
    }
    ob = step.nextObservation;
    stop = step.nextStopCondition;
    turns.push(`[tool] ${String(step.messages!.at(-1)!.content)}`);
  }
  if (examples.length < 8) examples.push(`${p.a} ${p.op ?? "+"} ${p.b} = ${answer} | copy: ${got} | call: ${call} | episode: ${turns.join(" ⏎ ")}`);
}
console.log(
  JSON.stringify({
    model: pathArg,
    n,
    op,
    digits,
    call_nll_per_token: +(callNll / callTok).toFixed(3),
    answer_nll_per_token: +(ansNll / ansTok).toFixed(3),
    greedy_copy_accuracy: greedyCopy / n,
    greedy_call_share: greedyCall / n,
    greedy_call_exact: callRight / n,
    episode_correct_t1: episodeCorrect / n,
    episode_called_t1: episodeCalled / n,
  }),
);
for (const e of examples) console.log(e);
process.exit(0);
