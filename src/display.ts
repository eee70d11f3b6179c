// Token-level display of training data: runs of tokens coloured by weight, like the cookbook's
// colorize_example -- green trained (>0), yellow untrained (0), red negative (<0). Without colour
// (not a terminal) trained runs are marked [[…]] and negative ones [-[…]-].
import type { Datum } from "./tinker/types.ts";
import type { Tokenizer } from "./tokenizers/types.ts";

const GREEN = "\x1b[32m";
const YELLOW = "\x1b[33m";
const RED = "\x1b[31m";
const RESET = "\x1b[0m";

type Sign = 1 | 0 | -1;
const signOf = (w: number): Sign => (w > 0 ? 1 : w < 0 ? -1 : 0);

/** Tokens rendered in runs of equal weight sign; each run decoded whole so multi-byte text stays intact. */
export function formatWeightedTokens(tokens: readonly number[], weights: ArrayLike<number>, tokenizer: Tokenizer, options: { color: boolean }): string {
  if (tokens.length !== weights.length) {
    throw new Error(`formatWeightedTokens: ${tokens.length} tokens but ${weights.length} weights`);
  }
  let out = "";
  let start = 0;
  while (start < tokens.length) {
    const sign = signOf(weights[start]!);
    let end = start + 1;
    while (end < tokens.length && signOf(weights[end]!) === sign) end++;
    out += paint(tokenizer.decode(tokens.slice(start, end)), sign, options.color);
    start = end;
  }
  return out;
}

/** A run of consecutive tokens whose weights share a sign, decoded whole. */
export interface WeightedSegment {
  text: string;
  weight: number;
}

/**
 * A datum as the sequence it was cut from: its input tokens plus the last target, with the
 * per-token `key` tensor (weights, advantages…) shifted back by one (the first token has 0), in
 * runs of equal weight sign. Image chunks show as "@".
 */
export function exampleSegments(datum: Datum, tokenizer: Tokenizer, key = "weights"): WeightedSegment[] {
  const values = datum.loss_fn_inputs[key]?.data;
  const targets = datum.loss_fn_inputs["target_tokens"]?.data;
  if (values === undefined || targets === undefined) {
    throw new Error(`the datum has no loss_fn_inputs.${values === undefined ? key : "target_tokens"}`);
  }
  const segments: WeightedSegment[] = [];
  let tokens: number[] = [];
  let weights: number[] = [];
  let pos = 0;
  const flush = (): void => {
    let start = 0;
    while (start < tokens.length) {
      const sign = signOf(weights[start]!);
      let end = start + 1;
      while (end < tokens.length && signOf(weights[end]!) === sign) end++;
      segments.push({ text: tokenizer.decode(tokens.slice(start, end)), weight: weights[start]! });
      start = end;
    }
    tokens = [];
    weights = [];
  };
  const weightAt = (i: number): number => (i === 0 ? 0 : (values[i - 1] ?? 0));
  for (const chunk of datum.model_input.chunks) {
    if (chunk.type === "encoded_text") {
      for (const t of chunk.tokens) {
        tokens.push(t);
        weights.push(weightAt(pos++));
      }
    } else {
      flush();
      segments.push({ text: "@", weight: 0 });
      pos += chunk.expected_tokens ?? 0;
    }
  }
  if (targets.length > 0) {
    tokens.push(targets[targets.length - 1]!);
    weights.push(weightAt(pos));
  }
  flush();
  return segments;
}

/** colorize_example: the datum's segments coloured (or bracketed without colour) by weight sign. */
export function colorizeExample(datum: Datum, tokenizer: Tokenizer, options: { key?: string; color: boolean }): string {
  let segments: WeightedSegment[];
  try {
    segments = exampleSegments(datum, tokenizer, options.key);
  } catch (err) {
    throw new Error(`colorizeExample: ${(err as Error).message}`);
  }
  return segments.map(({ text, weight }) => paint(text, signOf(weight), options.color)).join("");
}

function paint(text: string, sign: Sign, color: boolean): string {
  if (color) return (sign > 0 ? GREEN : sign < 0 ? RED : YELLOW) + text + RESET;
  return sign > 0 ? `[[${text}]]` : sign < 0 ? `[-[${text}]-]` : text;
}
