// The bundle's Intl.Segmenter (scripts/build.mjs puts it in place of the global for every module,
// ours and the libraries'). The first segmenter a process makes costs ~20 ms while ICU loads its
// break-iterator data, and several libraries make one when they load (string-width and its copies
// under cliui and wrap-ansi, slice-ansi, ansi-tokenize) although a start rarely segments text
// that needs it. Text whose code units are each a grapheme of their own (loneGraphemes.ts, and
// control characters other than CR, which joins a following LF) is split here one code unit at a
// time, which is what ICU answers for it; anything else, and word or sentence granularity, goes
// to a real segmenter made at that first call. test/tui/segmenter.test.ts compares the two.
import { isLoneGrapheme } from "./loneGraphemes.ts";

// Read through globalThis: the build defines `Intl.Segmenter` as this class, and the reference
// here must stay the engine's own.
const RealSegmenter = globalThis.Intl.Segmenter;

const CR = 0x0d;

/** Whether every code unit of `text` is a grapheme of its own whatever its neighbours. */
function splitsPerCodeUnit(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isLoneGrapheme(c)) continue;
    // Controls break on both sides (UAX #29 GB4/GB5), except CR before LF (GB3).
    if ((c < 0x20 && c !== CR) || (c >= 0x7f && c < 0xa0)) continue;
    return false;
  }
  return true;
}

function perCodeUnit(input: string): Intl.Segments {
  const at = (index: number): Intl.SegmentData => ({ segment: input[index]!, index, input });
  return {
    containing: (codeUnitIndex = 0) => {
      const index = Math.trunc(Number(codeUnitIndex) || 0);
      return index >= 0 && index < input.length ? at(index) : undefined;
    },
    *[Symbol.iterator]() {
      for (let i = 0; i < input.length; i++) yield at(i);
    },
  } as Intl.Segments;
}

export class FastSegmenter {
  readonly #locales: string | string[] | undefined;
  readonly #options: Intl.SegmenterOptions | undefined;
  readonly #graphemes: boolean;
  #real: Intl.Segmenter | undefined;

  constructor(locales?: string | string[], options?: Intl.SegmenterOptions) {
    this.#locales = locales;
    this.#options = options;
    this.#graphemes = (options?.granularity ?? "grapheme") === "grapheme";
  }

  #segmenter(): Intl.Segmenter {
    this.#real ??= new RealSegmenter(this.#locales, this.#options);
    return this.#real;
  }

  segment(input: string): Intl.Segments {
    const text = String(input);
    return this.#graphemes && splitsPerCodeUnit(text) ? perCodeUnit(text) : this.#segmenter().segment(text);
  }

  resolvedOptions(): Intl.ResolvedSegmenterOptions {
    return this.#segmenter().resolvedOptions();
  }

  static supportedLocalesOf(locales: string | string[], options?: { localeMatcher?: "lookup" | "best fit" }): string[] {
    return RealSegmenter.supportedLocalesOf(locales, options);
  }
}
