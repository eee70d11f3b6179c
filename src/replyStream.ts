// Streaming a reply over the Tinker sampling API (cookbook chat, the OpenAI endpoint of cookbook
// serve), which answers a request only when it is done: the
// reply is sampled in chunks of growing size (4, 8, 16, then 32 tokens), each continuing from the
// prompt plus everything sampled so far, so the first words show after a few tokens instead of
// after the whole reply. Stop strings are checked across chunk boundaries here (the sampler only
// sees one chunk), and text is decoded incrementally: bytes of a half-finished UTF-8 character and
// the start of a possible stop string are held back until the next tokens settle them.
import type { StopCondition } from "./completers.ts";
import { mixSeed } from "./random/seeds.ts";
import type { SamplingClient } from "./tinker/clients.ts";
import type { ModelInput } from "./tinker/types.ts";
import type { Tokenizer } from "./tokenizers/types.ts";

export const CHUNK_SCHEDULE = [4, 8, 16, 32] as const;

export interface StreamParams {
  maxTokens: number;
  temperature: number;
  topP: number;
  /** Seeds every chunk (mixed with its index), for reproducible replies; unset draws fresh entropy. */
  seed?: number;
  stop: StopCondition;
}

export interface StreamResult {
  tokens: number[];
  stopReason: "stop" | "length";
  /** Sample calls made (one per chunk). */
  calls: number;
}

/** Turns a growing token list into text pieces safe to print. */
export class IncrementalDecoder {
  private tokens: number[] = [];
  private printed = 0;

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly stopStrings: readonly string[],
  ) {}

  /** The full text so far (special tokens skipped). */
  text(): string {
    return this.tokenizer.decode(this.tokens, { skipSpecialTokens: true });
  }

  /** The index of the first stop string in the text, or -1. */
  stopIndex(): number {
    const text = this.text();
    let first = -1;
    for (const s of this.stopStrings) {
      const i = text.indexOf(s);
      if (i !== -1 && (first === -1 || i < first)) first = i;
    }
    return first;
  }

  /** Adds tokens; returns the new text that can be shown now. */
  push(tokens: readonly number[]): string {
    this.tokens.push(...tokens);
    const text = this.text();
    const stopAt = this.stopIndex();
    let safe = stopAt === -1 ? text.length : stopAt;
    if (stopAt === -1) {
      // An unfinished multi-byte character decodes to U+FFFD until its last byte arrives.
      while (safe > this.printed && text.charCodeAt(safe - 1) === 0xfffd) safe--;
      // Hold back a tail that may be the beginning of a stop string.
      const shown = text.slice(0, safe);
      let held = 0;
      for (const stop of this.stopStrings) {
        for (let k = Math.min(stop.length - 1, shown.length); k > held; k--) {
          if (shown.endsWith(stop.slice(0, k))) {
            held = k;
            break;
          }
        }
      }
      safe -= held;
    }
    if (safe <= this.printed) return "";
    const piece = text.slice(this.printed, safe);
    this.printed = safe;
    return piece;
  }

  /** Whatever was held back (e.g. a partial stop string that never completed). */
  flush(): string {
    const text = this.text();
    const stopAt = this.stopIndex();
    const end = stopAt === -1 ? text.length : stopAt;
    const piece = end > this.printed ? text.slice(this.printed, end) : "";
    this.printed = Math.max(this.printed, end);
    return piece;
  }
}

function withTokens(prompt: ModelInput, tokens: readonly number[]): ModelInput {
  if (tokens.length === 0) return prompt;
  return { chunks: [...prompt.chunks, { type: "encoded_text", tokens: [...tokens] }] };
}

/** Samples one reply chunk by chunk, calling `onTokens` as each chunk arrives. */
export async function streamReply(
  sampler: SamplingClient,
  prompt: ModelInput,
  params: StreamParams,
  onTokens: (tokens: number[]) => boolean | void,
): Promise<StreamResult> {
  const tokens: number[] = [];
  let calls = 0;
  while (tokens.length < params.maxTokens) {
    const want = Math.min(CHUNK_SCHEDULE[Math.min(calls, CHUNK_SCHEDULE.length - 1)]!, params.maxTokens - tokens.length);
    const response = await sampler.sample(withTokens(prompt, tokens), 1, {
      max_tokens: want,
      temperature: params.temperature,
      top_p: params.topP,
      stop: params.stop,
      ...(params.seed === undefined ? {} : { seed: mixSeed(params.seed, calls) }),
    });
    calls++;
    const seq = response.sequences[0];
    if (seq === undefined) throw new Error("the sampler returned no sequence for a request of 1 sample");
    tokens.push(...seq.tokens);
    // The caller says stop when a stop string completed across chunks.
    const callerStop = onTokens(seq.tokens) === true;
    if (seq.stop_reason === "stop" || callerStop) return { tokens, stopReason: "stop", calls };
    if (seq.tokens.length === 0) break;
  }
  return { tokens, stopReason: "length", calls };
}
