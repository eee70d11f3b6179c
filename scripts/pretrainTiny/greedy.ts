// Batched greedy decoding straight on an EngineModel (KV cache, no sampler or worker), used to
// watch the tiny model learn: held-out addition accuracy and sample continuations.
import type { EngineModel } from "../../src/engine/model/model.ts";
import type { ByteLevelBpeEncoder } from "../../src/tokenizerTraining/encoder.ts";
import { ARITHMETIC_FEWSHOT_PREFIX, ROLE_COLON_STOP, additionQuestion, renderRoleColonPrompt } from "../../src/data/synthetic/index.ts";

export interface GreedyOptions {
  maxNewTokens: number;
  /** Generation stops once the decoded continuation contains this string. */
  stop: string;
  eosTokenId: number;
  /** Prompts decoded together (one KV-cache slot each). */
  batchSize?: number;
}

/** Greedy continuations (decoded text, stop string and EOS excluded) of each prompt. */
export function greedyContinuations(model: EngineModel, encoder: ByteLevelBpeEncoder, prompts: readonly number[][], options: GreedyOptions): string[] {
  const out: string[] = [];
  const batch = options.batchSize ?? 64;
  for (let start = 0; start < prompts.length; start += batch) {
    out.push(...decodeBatch(model, encoder, prompts.slice(start, start + batch), options));
  }
  return out;
}

function argmax(logits: ArrayLike<number>, offset: number, n: number): number {
  let best = 0;
  let bestVal = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = logits[offset + i];
    if (v > bestVal) {
      bestVal = v;
      best = i;
    }
  }
  return best;
}

function decodeBatch(model: EngineModel, encoder: ByteLevelBpeEncoder, prompts: readonly number[][], options: GreedyOptions): string[] {
  const V = model.config.vocabSize;
  const maxPrompt = Math.max(...prompts.map((p) => p.length));
  const cache = model.createKvCache(Math.min(model.config.maxPositionEmbeddings, maxPrompt + options.maxNewTokens), prompts.length);
  const tokens: number[] = [];
  const positions: number[] = [];
  const slots: number[] = [];
  const lastRows: number[] = [];
  prompts.forEach((p, s) => {
    p.forEach((t, i) => {
      tokens.push(t);
      positions.push(i);
      slots.push(s);
    });
    lastRows.push(tokens.length - 1);
  });
  let logits = model.forwardIncremental(cache, Int32Array.from(tokens), Int32Array.from(positions), Int32Array.from(slots), Int32Array.from(lastRows));
  const generated: number[][] = prompts.map(() => []);
  const texts: string[] = prompts.map(() => "");
  let active = prompts.map((_, s) => s);
  for (let step = 0; step < options.maxNewTokens && active.length > 0; step++) {
    const next: number[] = active.map((_, r) => argmax(logits, r * V, V));
    const still: number[] = [];
    const feedTokens: number[] = [];
    const feedPositions: number[] = [];
    active.forEach((s, r) => {
      const tok = next[r];
      if (tok === options.eosTokenId) return;
      generated[s].push(tok);
      texts[s] = encoder.decode(generated[s]);
      if (texts[s].includes(options.stop)) return;
      if (prompts[s].length + generated[s].length >= cache.maxTokens) return;
      still.push(s);
      feedTokens.push(tok);
      feedPositions.push(prompts[s].length + generated[s].length - 1);
    });
    active = still;
    if (active.length === 0) break;
    logits = model.forwardIncremental(cache, Int32Array.from(feedTokens), Int32Array.from(feedPositions), Int32Array.from(active));
  }
  return texts.map((t) => {
    const i = t.indexOf(options.stop);
    return i >= 0 ? t.slice(0, i) : t;
  });
}

export interface AdditionEval {
  accuracy: number;
  /** Fraction of answers that ended with the stop string (the RL format check). */
  stopRate: number;
  examples: Array<{ question: string; expected: string; got: string }>;
}

/**
 * The RL arithmetic task exactly: few-shot prefix + "What is x + y?", BOS first, graded like the
 * cookbook's ArithmeticEnv.check_answer (first whitespace-separated chunk parsed as an integer).
 */
export function evaluateAddition(model: EngineModel, encoder: ByteLevelBpeEncoder, pairs: ReadonlyArray<[number, number]>, bosTokenId: number): AdditionEval {
  const prompts = pairs.map(([x, y]) => [
    bosTokenId,
    ...encoder.encode(renderRoleColonPrompt([...ARITHMETIC_FEWSHOT_PREFIX, { role: "user", content: additionQuestion(x, y) }])),
  ]);
  // Collect a few tokens past the answer so we can tell whether the stop string followed.
  const raw = greedyContinuations(model, encoder, prompts, { maxNewTokens: 10, stop: "\u0000never", eosTokenId: bosTokenId });
  let correct = 0;
  let stopped = 0;
  const examples: AdditionEval["examples"] = [];
  pairs.forEach(([x, y], i) => {
    const text = raw[i];
    const cut = text.indexOf(ROLE_COLON_STOP);
    if (cut >= 0) stopped++;
    const answer = cut >= 0 ? text.slice(0, cut) : text;
    const first = answer.trim().split(/\s+/)[0] ?? "";
    const ok = /^[+-]?\d+$/.test(first) && Number(first) === x + y;
    if (ok) correct++;
    if (examples.length < 8) examples.push({ question: `${x} + ${y}`, expected: String(x + y), got: answer });
  });
  return { accuracy: correct / pairs.length, stopRate: stopped / pairs.length, examples };
}
