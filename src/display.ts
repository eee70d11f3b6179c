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
export function formatWeightedTokens(
  tokens: readonly number[],
  weights: ArrayLike<number>,
  tokenizer: Tokenizer,
  options: { color: boolean },
): string {
  if (tokens.length !== weights.length) {
    throw new Error(`formatWeightedTokens: ${tokens.length} tokens but ${weights.length} weights`);
  }
  let out = "";
  let start = 0;
  while (start < tokens.length) {
    const sign = signOf(weights[start]!);
    let end = start + 1;
    while (end < tokens.length && signOf(weights[end]!) === sign) end++;
    const text = tokenizer.decode(tokens.slice(start, end));
    if (options.color) out += (sign > 0 ? GREEN : sign < 0 ? RED : YELLOW) + text + RESET;
    else out += sign > 0 ? `[[${text}]]` : sign < 0 ? `[-[${text}]-]` : text;
    start = end;
  }
  return out;
}

/**
 * A datum shown as the sequence it was cut from: its input tokens plus the last target, with
 * the per-token `key` tensor (weights, advantages…) shifted back by one (the first token has 0).
 * Image chunks show as "@".
 */
export function colorizeExample(datum: Datum, tokenizer: Tokenizer, options: { key?: string; color: boolean }): string {
  const key = options.key ?? "weights";
  const values = datum.loss_fn_inputs[key]?.data;
  const targets = datum.loss_fn_inputs["target_tokens"]?.data;
  if (values === undefined || targets === undefined) {
    throw new Error(`colorizeExample: the datum has no loss_fn_inputs.${values === undefined ? key : "target_tokens"}`);
  }
  const pieces: string[] = [];
  let tokens: number[] = [];
  let weights: number[] = [];
  let pos = 0;
  const flush = (): void => {
    if (tokens.length > 0) pieces.push(formatWeightedTokens(tokens, weights, tokenizer, options));
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
      pieces.push("@");
      pos += chunk.expected_tokens ?? 0;
    }
  }
  if (targets.length > 0) {
    tokens.push(targets[targets.length - 1]!);
    weights.push(weightAt(pos));
  }
  flush();
  return pieces.join("");
}
