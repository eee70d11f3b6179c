// Helpers for ModelInput (docs/protocol.md#modelinput). Values are treated as immutable: every helper returns a new
// ModelInput so a prompt shared between datums cannot be changed behind another datum's back.
import { InvalidArgumentError } from "./errors.ts";
import type { ModelInput, ModelInputChunk } from "./types.ts";

export function emptyModelInput(): ModelInput {
  return { chunks: [] };
}

export function modelInputFromInts(tokens: ArrayLike<number>): ModelInput {
  return { chunks: [{ type: "encoded_text", tokens: checkTokens(tokens, "modelInputFromInts") }] };
}

/** The token ids of a text-only input; image chunks have no token ids on the client. */
export function modelInputToInts(mi: ModelInput): number[] {
  const out: number[] = [];
  mi.chunks.forEach((chunk, i) => {
    if (chunk.type !== "encoded_text") {
      throw new InvalidArgumentError(`modelInputToInts: chunk ${i} is of type "${chunk.type}"; only "encoded_text" chunks can be turned into token ids`);
    }
    for (const t of chunk.tokens) out.push(t);
  });
  return out;
}

export function chunkLength(chunk: ModelInputChunk, index = 0): number {
  if (chunk.type === "encoded_text") return chunk.tokens.length;
  if (chunk.expected_tokens === undefined) {
    throw new InvalidArgumentError(
      `chunk ${index} of type "${chunk.type}" has no expected_tokens; set expected_tokens to the number of tokens the image occupies so the input length is known`,
    );
  }
  return chunk.expected_tokens;
}

export function modelInputLength(mi: ModelInput): number {
  let n = 0;
  mi.chunks.forEach((chunk, i) => {
    n += chunkLength(chunk, i);
  });
  return n;
}

/** Appends tokens, extending a trailing text chunk instead of starting a new one. */
export function appendTokens(mi: ModelInput, tokens: ArrayLike<number>): ModelInput {
  const toks = checkTokens(tokens, "appendTokens");
  const last = mi.chunks[mi.chunks.length - 1];
  if (last !== undefined && last.type === "encoded_text") {
    return { chunks: [...mi.chunks.slice(0, -1), { type: "encoded_text", tokens: [...last.tokens, ...toks] }] };
  }
  return { chunks: [...mi.chunks, { type: "encoded_text", tokens: toks }] };
}

export function appendChunk(mi: ModelInput, chunk: ModelInputChunk): ModelInput {
  return { chunks: [...mi.chunks, chunk] };
}

function checkTokens(tokens: ArrayLike<number>, where: string): number[] {
  const out = Array.from(tokens);
  out.forEach((t, i) => {
    if (!Number.isInteger(t) || t < 0) {
      throw new InvalidArgumentError(`${where}: token ${i} is ${t}; expected a non-negative integer token id`);
    }
  });
  return out;
}
