// Transcripts screen state, pure: the iteration, sort, text filter, reward-bin filter picked from
// the histogram, cursor and detail scroll, and which view (list, group, histogram) is shown.
import type { Key } from "ink";
import { SORTS, type RewardSort, type TranscriptFilter, parseTranscriptFilter } from "../../../core/transcripts.ts";
import { editText, moveCursor } from "../../../core/textEdit.ts";

export type TranscriptsView = "list" | "group" | "histogram";

export interface BinFilter {
  /** Shown in the header, e.g. `0.5..1`. */
  label: string;
  range: Pick<TranscriptFilter, "min" | "max" | "below">;
}

export interface TranscriptsState {
  /** Index into the run's iterations; undefined follows the latest. */
  iterIdx?: number;
  sort: RewardSort;
  filterText: string;
  typing: boolean;
  bin?: BinFilter;
  /** The histogram bar under the cursor in the histogram view. */
  binCursor: number;
  cursor: number;
  scroll: number;
  view: TranscriptsView;
}

export type TranscriptsAction =
  | { type: "iteration"; direction: 1 | -1; current: number; count: number }
  | { type: "sort" }
  | { type: "startTyping" }
  | { type: "type"; input: string; key: Key }
  | { type: "move"; cmd: string; count: number }
  | { type: "scroll"; by: number }
  | { type: "toggleView"; view: Exclude<TranscriptsView, "list"> }
  | { type: "applyBin"; bin: BinFilter }
  | { type: "back" };

export function initialTranscripts(iterIdx?: number): TranscriptsState {
  return { iterIdx, sort: "desc", filterText: "", typing: false, binCursor: 0, cursor: 0, scroll: 0, view: "list" };
}

/** The filter in effect: the typed one narrowed by the picked bin. */
export function effectiveFilter(s: TranscriptsState): TranscriptFilter {
  return { ...parseTranscriptFilter(s.filterText), ...(s.bin?.range ?? {}) };
}

/** Whether Esc has something to undo here (a view, a bin, a filter) or leaves the screen. */
export function backHandled(s: TranscriptsState): boolean {
  return s.view !== "list" || s.bin !== undefined || s.filterText !== "";
}

export function transcriptsReducer(s: TranscriptsState, a: TranscriptsAction): TranscriptsState {
  switch (a.type) {
    case "iteration": {
      const next = a.current + a.direction;
      const iterIdx = a.current >= 0 && next >= 0 && next < a.count ? next : s.iterIdx;
      return { ...s, iterIdx, cursor: 0, binCursor: 0 };
    }
    case "sort":
      return { ...s, sort: SORTS[(SORTS.indexOf(s.sort) + 1) % SORTS.length] };
    case "startTyping":
      return { ...s, typing: true };
    case "type":
      if (a.key.escape || a.key.return) return { ...s, typing: false };
      return { ...s, filterText: editText(s.filterText, a.input, a.key), cursor: 0 };
    case "move": {
      const moved = moveCursor(a.cmd, s.view === "histogram" ? s.binCursor : s.cursor, a.count);
      if (moved === undefined) return s;
      return s.view === "histogram" ? { ...s, binCursor: moved } : { ...s, cursor: moved, scroll: 0 };
    }
    case "scroll":
      return { ...s, scroll: Math.max(0, s.scroll + a.by) };
    case "toggleView":
      return { ...s, view: s.view === a.view ? "list" : a.view };
    case "applyBin":
      return { ...s, bin: a.bin, view: "list", cursor: 0, scroll: 0 };
    case "back":
      if (s.view !== "list") return { ...s, view: "list" };
      if (s.bin) return { ...s, bin: undefined, cursor: 0 };
      if (s.filterText) return { ...s, filterText: "", cursor: 0 };
      return s;
  }
}
