// Evals screen state, pure: which level is shown (eval results, models side by side per
// benchmark, one benchmark's examples, one example, two runs example by example), the cursor of
// each level, the examples filter and the run marked as A for a comparison. The component feeds
// it list lengths; nothing here reads files.
export type EvalsLevel = "results" | "compare" | "examples" | "example" | "diff";
export type ExampleFilter = "all" | "wrong" | "right" | "errors";
export const EXAMPLE_FILTERS: readonly ExampleFilter[] = ["all", "wrong", "right", "errors"];

export interface EvalsState {
  level: EvalsLevel;
  resultCursor: number;
  compareCursor: number;
  exampleCursor: number;
  /** First line shown of the example detail. */
  detailScroll: number;
  filter: ExampleFilter;
  /** The result (run id, benchmark) whose examples are open. */
  open?: { runId: string; benchmark: string };
  /** The run marked as A (m); d compares it with the run under the cursor (B). */
  marked?: string;
  /** The two runs compared example by example, and the first line shown. */
  diff?: { a: string; b: string };
  diffScroll: number;
}

export type MoveCmd = "up" | "down" | "top" | "bottom" | "pageUp" | "pageDown";

export type EvalsAction =
  | { type: "move"; cmd: MoveCmd; count: number; page: number }
  | { type: "openResult"; runId: string; benchmark: string }
  | { type: "openExample" }
  | { type: "toggleCompare" }
  | { type: "cycleFilter" }
  | { type: "mark"; runId: string }
  | { type: "openDiff"; runId: string }
  | { type: "back" };

export function initialEvals(): EvalsState {
  return { level: "results", resultCursor: 0, compareCursor: 0, exampleCursor: 0, detailScroll: 0, filter: "all", diffScroll: 0 };
}

export function moveCursor(cursor: number, cmd: MoveCmd, count: number, page: number): number {
  if (count <= 0) return 0;
  const last = count - 1;
  const at = Math.min(cursor, last);
  switch (cmd) {
    case "up":
      return Math.max(0, at - 1);
    case "down":
      return Math.min(last, at + 1);
    case "top":
      return 0;
    case "bottom":
      return last;
    case "pageUp":
      return Math.max(0, at - page);
    case "pageDown":
      return Math.min(last, at + page);
  }
}

/** Whether Esc is used by the screen (going up a level) rather than leaving it. */
export function handlesBack(s: EvalsState): boolean {
  return s.level !== "results";
}

export function evalsReducer(s: EvalsState, a: EvalsAction): EvalsState {
  switch (a.type) {
    case "move":
      if (s.level === "results") return { ...s, resultCursor: moveCursor(s.resultCursor, a.cmd, a.count, a.page) };
      if (s.level === "compare") return { ...s, compareCursor: moveCursor(s.compareCursor, a.cmd, a.count, a.page) };
      if (s.level === "examples") return { ...s, exampleCursor: moveCursor(s.exampleCursor, a.cmd, a.count, a.page) };
      if (s.level === "diff") return { ...s, diffScroll: moveCursor(s.diffScroll, a.cmd, a.count, a.page) };
      // Detail: the count is the number of lines, the cursor is the scroll position.
      return { ...s, detailScroll: moveCursor(s.detailScroll, a.cmd, a.count, a.page) };
    case "openResult":
      return { ...s, level: "examples", open: { runId: a.runId, benchmark: a.benchmark }, exampleCursor: 0, filter: "all" };
    case "openExample":
      return s.level === "examples" ? { ...s, level: "example", detailScroll: 0 } : s;
    case "toggleCompare":
      if (s.level === "results") return { ...s, level: "compare" };
      if (s.level === "compare") return { ...s, level: "results" };
      return s;
    case "cycleFilter": {
      if (s.level !== "examples") return s;
      const next = EXAMPLE_FILTERS[(EXAMPLE_FILTERS.indexOf(s.filter) + 1) % EXAMPLE_FILTERS.length]!;
      return { ...s, filter: next, exampleCursor: 0 };
    }
    case "mark":
      if (s.level !== "results") return s;
      return { ...s, marked: s.marked === a.runId ? undefined : a.runId };
    case "openDiff":
      if (s.level !== "results" || s.marked === undefined || s.marked === a.runId) return s;
      return { ...s, level: "diff", diff: { a: s.marked, b: a.runId }, diffScroll: 0 };
    case "back":
      if (s.level === "diff") return { ...s, level: "results", diff: undefined };
      if (s.level === "example") return { ...s, level: "examples" };
      if (s.level === "examples") return { ...s, level: "results", open: undefined };
      if (s.level === "compare") return { ...s, level: "results" };
      return s;
  }
}
