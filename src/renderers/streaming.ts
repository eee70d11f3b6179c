// Incremental parsing of a sampled response as its tokens arrive (docs/cookbook-parity.md#renderer-contract,
// parse_response_streaming): a header delta, then text and reasoning deltas as soon as they can
// no longer turn out to be part of a tag, then the final message — which is always exactly what
// the renderer's one-shot parseResponse returns for the same tokens.
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Message, ParsedResponse, ParseTermination } from "./types.ts";

/** What an incremental parser watches for in a family's responses. */
export interface StreamingMarkup {
  /** Tags around reasoning, e.g. "<think>" and "</think>". */
  thinkOpen: string;
  thinkClose: string;
  /** The generation prompt already opened the reasoning block (a prefilled "<think>"). */
  startsInThinking: boolean;
  /** Tags that open a tool-call section; what follows is not streamed (calls arrive with the final message). */
  toolOpen: readonly string[];
}

export type StreamDelta =
  | { type: "header"; role: string }
  | { type: "text"; text: string; contentIndex: number }
  | { type: "thinking"; thinking: string; contentIndex: number };

export interface StreamFinish extends ParsedResponse {
  /** Deltas for whatever was still held back when the stream ended. */
  deltas: StreamDelta[];
}

/** The part of a renderer the stream parser needs (kept structural to avoid an import cycle). */
export interface StreamableRenderer {
  readonly tokenizer: Tokenizer;
  getStopSequences(): number[] | string[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
  streamingMarkup(): StreamingMarkup | null;
}

const REPLACEMENT = "\ufffd";
/** A UTF-8 character is at most 4 bytes, so a few tokens always cover an incomplete tail. */
const MAX_TRAILING_TOKENS = 8;

/** Decodes tokens incrementally, holding back tokens that end inside a multi-byte character. */
export class Utf8TokenDecoder {
  private pending: number[] = [];

  constructor(private readonly tokenizer: Tokenizer) {}

  /** Text completed by these tokens ("" when everything is still pending). */
  decode(tokens: readonly number[]): string {
    for (const t of tokens) this.pending.push(t);
    if (this.pending.length === 0) return "";
    const all = this.tokenizer.decode(this.pending);
    if (!all.endsWith(REPLACEMENT)) {
      this.pending = [];
      return all;
    }
    for (let drop = 1; drop <= Math.min(this.pending.length - 1, MAX_TRAILING_TOKENS); drop++) {
      const text = this.tokenizer.decode(this.pending.slice(0, -drop));
      if (!text.endsWith(REPLACEMENT)) {
        this.pending = this.pending.slice(-drop);
        return text;
      }
    }
    return "";
  }

  /** Everything still pending, incomplete characters included (as U+FFFD). */
  flush(): string {
    const text = this.pending.length > 0 ? this.tokenizer.decode(this.pending) : "";
    this.pending = [];
    return text;
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let n = Math.min(text.length, tag.length - 1); n > 0; n--) if (text.endsWith(tag.slice(0, n))) return n;
  return 0;
}

type Mode = "text" | "thinking" | "tool" | "done";

export class ResponseStreamParser {
  private readonly decoder: Utf8TokenDecoder;
  private readonly markup: StreamingMarkup | null;
  private readonly stopTokens: ReadonlySet<number>;
  private readonly stopStrings: readonly string[];
  private readonly tokens: number[] = [];
  private stopped = false;
  private finished = false;
  private text = "";
  private emitted = 0;
  private mode: Mode;
  private contentIndex = 0;
  private headerSent = false;

  constructor(private readonly renderer: StreamableRenderer) {
    this.decoder = new Utf8TokenDecoder(renderer.tokenizer);
    this.markup = renderer.streamingMarkup();
    const stops = renderer.getStopSequences();
    this.stopTokens = new Set(stops.filter((s): s is number => typeof s === "number"));
    this.stopStrings = stops.filter((s): s is string => typeof s === "string");
    this.mode = this.markup?.startsInThinking ? "thinking" : "text";
  }

  /** Feeds newly sampled tokens; returns the deltas they complete. Tokens after the stop are ignored. */
  feed(tokens: readonly number[]): StreamDelta[] {
    if (this.finished) throw new Error("ResponseStreamParser.feed called after finish()");
    const fresh: number[] = [];
    for (const t of tokens) {
      if (this.stopped) break;
      this.tokens.push(t);
      if (this.stopTokens.has(t)) this.stopped = true;
      else fresh.push(t);
    }
    if (fresh.length === 0) return [];
    this.text += this.decoder.decode(fresh);
    return this.emit(false);
  }

  /** Ends the stream: the held-back deltas and the final parsed message. */
  finish(): StreamFinish {
    if (this.finished) throw new Error("ResponseStreamParser.finish called twice");
    this.finished = true;
    this.text += this.decoder.flush();
    const deltas = this.emit(true);
    if (!this.headerSent) {
      this.headerSent = true;
      deltas.unshift({ type: "header", role: "assistant" });
    }
    const { message, termination }: { message: Message; termination: ParseTermination } = this.renderer.parseResponse(this.tokens);
    return { deltas, message, termination };
  }

  private emit(final: boolean): StreamDelta[] {
    const out: StreamDelta[] = [];
    const push = (kind: "text" | "thinking", s: string): void => {
      if (s === "") return;
      if (!this.headerSent) {
        this.headerSent = true;
        out.push({ type: "header", role: "assistant" });
      }
      out.push(
        kind === "text" ? { type: "text", text: s, contentIndex: this.contentIndex } : { type: "thinking", thinking: s, contentIndex: this.contentIndex },
      );
    };
    const text = this.text;
    for (;;) {
      if (this.mode === "tool" || this.mode === "done") {
        this.emitted = text.length;
        return out;
      }
      const watched = this.watchedTags();
      let best = -1;
      let bestTag = "";
      for (const tag of watched) {
        const at = text.indexOf(tag, this.emitted);
        if (at !== -1 && (best === -1 || at < best)) {
          best = at;
          bestTag = tag;
        }
      }
      const kind = this.mode;
      if (best === -1) {
        const rest = text.slice(this.emitted);
        const hold = final ? 0 : Math.max(0, ...watched.map((tag) => partialTagLength(rest, tag)));
        push(kind, rest.slice(0, rest.length - hold));
        this.emitted = text.length - hold;
        return out;
      }
      push(kind, text.slice(this.emitted, best));
      this.emitted = best + bestTag.length;
      this.contentIndex++;
      if (this.stopStrings.includes(bestTag)) this.mode = "done";
      else if (kind === "thinking") this.mode = "text";
      else if (this.markup !== null && bestTag === this.markup.thinkOpen) this.mode = "thinking";
      else this.mode = "tool";
    }
  }

  private watchedTags(): string[] {
    const m = this.markup;
    if (this.mode === "thinking") return m ? [m.thinkClose, ...this.stopStrings] : [...this.stopStrings];
    return m ? [m.thinkOpen, ...m.toolOpen, ...this.stopStrings] : [...this.stopStrings];
  }
}
