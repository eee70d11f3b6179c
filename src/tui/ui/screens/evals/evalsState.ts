// Evals screen state, pure: which level is shown (eval results, models side by side per
// benchmark, one benchmark's examples, one example), the cursor of each level and the
// examples filter. The component feeds it list lengths; nothing here reads files.
export type EvalsLevel = "results" | "compare" | "examples" | "example";
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
}

export type MoveCmd = "up" | "down" | "top" | "bottom" | "pageUp" | "pageDown";

export type EvalsAction =
  | { type: "move"; cmd: MoveCmd; count: number; page: number }
  | { type: "openResult"; runId: string; benchmark: string }
  | { type: "openExample" }
  | { type: "toggleCompare" }
  | { type: "cycleFilter" }
  | { type: "back" };

export function initialEvals(): EvalsState {
  return { level: "results", resultCursor: 0, compareCursor: 0, exampleCursor: 0, detailScroll: 0, filter: "all" };
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
    case "back":
      if (s.level === "example") return { ...s, level: "examples" };
      if (s.level === "examples") return { ...s, level: "results", open: undefined };
      if (s.level === "compare") return { ...s, level: "results" };
      return s;
  }
}
