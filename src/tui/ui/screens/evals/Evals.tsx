// Evals: the eval store's results (newest first), models side by side per benchmark (tab), one
// result's examples (enter; f filters wrong/right/errors) and one example in full (enter):
// prompt, each sampled response, the extracted answer and the grade; m marks a run as A and d
// compares it with the run under the cursor example by example. Esc goes up a level.
import { type ReactNode, useEffect, useMemo, useReducer, useState } from "react";
import { Box, Text } from "ink";
import { compareEvalRuns, formatRunComparison } from "../../../../eval/compareRuns.ts";
import { compareByBenchmark, listEvalRuns, readEvalTrajectories, type EvalRunView } from "../../../../eval/reader.ts";
import { EvalStore, evalStoreDirFor, type TrajectoryRecord } from "../../../../eval/store.ts";
import { theme } from "../../../core/palette.ts";
import { useServices } from "../../../state/contexts.tsx";
import { useLoaded } from "../../hooks/useLoaded.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import type { EvalsCommand } from "./evalsKeys.ts";
import { evalsReducer, handlesBack, initialEvals, type MoveCmd } from "./evalsState.ts";
import { EXAMPLE_HEADER, compareLines, exampleDetailLines, exampleLine, filterExamples, resultRows, resultTableLines } from "./evalsView.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type EvalsRoute = RouteOf<"evals">;

const MOVES: readonly string[] = ["up", "down", "top", "bottom", "pageUp", "pageDown"];

function windowStart(cursor: number, count: number, size: number): number {
  if (count <= size) return 0;
  return Math.min(Math.max(0, cursor - Math.floor(size / 2)), count - size);
}

/** The eval store's runs, read again every few polls; `tick` changes with every read. */
function useEvalRuns(root: string, pollMs: number): { runs: EvalRunView[]; read: boolean; tick: number } {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), Math.max(1000, pollMs * 4));
    return () => clearInterval(timer);
  }, [pollMs]);
  const runs = useLoaded(() => listEvalRuns(root), [root, tick], NO_RUNS);
  return { runs: runs.value, read: runs.read, tick };
}
const NO_RUNS: EvalRunView[] = [];
const NO_RECORDS: TrajectoryRecord[] = [];

export function Evals({ rows, width }: { route: EvalsRoute; rows: number; width: number }): ReactNode {
  const services = useServices();
  const root = evalStoreDirFor(services.logRoot);
  const { runs, read, tick } = useEvalRuns(root, services.pollMs);
  const [s, dispatch] = useReducer(evalsReducer, undefined, initialEvals);
  const results = useMemo(() => resultRows(runs), [runs]);
  const comparison = useMemo(() => compareLines(compareByBenchmark(runs), width), [runs, width]);
  const records = useLoaded(
    () => (s.open === undefined ? NO_RECORDS : readEvalTrajectories(root, s.open.runId, s.open.benchmark)),
    // Re-read when the runs poll ticks, so a running eval's examples appear.
    [root, s.open, tick],
    NO_RECORDS,
  ).value;
  const shown = useMemo(() => filterExamples(records, s.filter), [records, s.filter]);
  const example = shown[Math.min(s.exampleCursor, shown.length - 1)];
  const detail = useMemo(() => (example === undefined ? [] : exampleDetailLines(example, width)), [example, width]);
  const listRows = Math.max(1, rows - 3);
  const diffLoad = useLoaded(
    () => {
      const diff = s.diff;
      if (diff === undefined) return { diff, lines: [] };
      try {
        return { diff, lines: formatRunComparison(compareEvalRuns(new EvalStore(root), diff.a, diff.b), 50).split("\n") };
      } catch (err) {
        return { diff, lines: [`cannot compare: ${(err as Error).message}`] };
      }
    },
    [root, s.diff, tick],
    { diff: undefined, lines: [] },
  ).value;
  // Until these two runs' comparison is first read, say so rather than show an empty page (later
  // polls keep the last comparison on screen while they re-read).
  const diffLines = diffLoad.diff === s.diff ? diffLoad.lines : ["  comparing the two runs…"];

  const count =
    s.level === "results"
      ? results.length
      : s.level === "compare"
        ? comparison.length
        : s.level === "examples"
          ? shown.length
          : s.level === "diff"
            ? Math.max(1, diffLines.length - listRows + 1)
            : Math.max(1, detail.length - listRows + 1);
  const under = results[Math.min(s.resultCursor, results.length - 1)];
  useScreenKeys<EvalsCommand>({
    capturing: false,
    onCommand: (cmd) => {
      if (MOVES.includes(cmd)) {
        dispatch({ type: "move", cmd: cmd as MoveCmd, count, page: Math.max(1, listRows - 1) });
        return true;
      }
      if (cmd === "open") {
        if (s.level === "results") {
          const r = results[Math.min(s.resultCursor, results.length - 1)];
          if (r !== undefined) dispatch({ type: "openResult", runId: r.runId, benchmark: r.benchmark });
        } else if (s.level === "examples" && example !== undefined) dispatch({ type: "openExample" });
        return true;
      }
      if (cmd === "evalsCompare") {
        dispatch({ type: "toggleCompare" });
        return true;
      }
      if (cmd === "evalsMark" && under !== undefined) {
        dispatch({ type: "mark", runId: under.runId });
        return true;
      }
      if (cmd === "evalsDiff" && under !== undefined) {
        dispatch({ type: "openDiff", runId: under.runId });
        return true;
      }
      if (cmd === "evalsFilter") {
        dispatch({ type: "cycleFilter" });
        return true;
      }
      if (cmd === "back" && handlesBack(s)) {
        dispatch({ type: "back" });
        return true;
      }
      return false;
    },
  });

  if (s.level === "diff" && s.diff !== undefined) {
    const scroll = Math.min(s.diffScroll, Math.max(0, diffLines.length - listRows));
    return (
      <Box flexDirection="column">
        <Text bold color={theme.accent} wrap="truncate">{`Evals  ${s.diff.a} (A) vs ${s.diff.b} (B), example by example`}</Text>
        {diffLines.slice(scroll, scroll + listRows + 1).map((l, i) => (
          <Text
            key={scroll + i}
            wrap="truncate"
            bold={/^\S/.test(l) && !l.startsWith("A =") && !l.startsWith("B =")}
            color={l.startsWith("  regressions") ? theme.error : l.startsWith("  improvements") ? theme.ok : undefined}
          >
            {l}
          </Text>
        ))}
      </Box>
    );
  }

  if (s.level === "results" || s.level === "compare") {
    const markedNote =
      s.marked !== undefined ? `  ·  A = ${s.marked} (d compares it with the run under the cursor)` : "  ·  m marks a run as A for a comparison";
    const title = s.level === "results" ? `Evals  ${results.length} results in ${root}${markedNote}` : `Evals  models side by side per benchmark (${root})`;
    if (results.length === 0) {
      return (
        <Box flexDirection="column">
          <Text bold color={theme.accent}>
            {title}
          </Text>
          <Text color={theme.muted}>{read ? `no eval results yet: run  cookbook eval tiny-chat arithmetic` : `reading ${root}…`}</Text>
        </Box>
      );
    }
    if (s.level === "compare") {
      const start = windowStart(s.compareCursor, comparison.length, listRows + 1);
      return (
        <Box flexDirection="column">
          <Text bold color={theme.accent} wrap="truncate">
            {title}
          </Text>
          {comparison.slice(start, start + listRows + 1).map((l, i) => (
            <Text key={start + i} wrap="truncate" bold={!l.startsWith(" ")} inverse={start + i === s.compareCursor}>
              {l}
            </Text>
          ))}
        </Box>
      );
    }
    const table = resultTableLines(results, width);
    const cursor = Math.min(s.resultCursor, results.length - 1);
    const start = windowStart(cursor, results.length, listRows);
    return (
      <Box flexDirection="column">
        <Text bold color={theme.accent} wrap="truncate">
          {title}
        </Text>
        <Text color={theme.muted} wrap="truncate">
          {table.header}
        </Text>
        {table.lines.slice(start, start + listRows).map((l, i) => (
          <Text key={start + i} wrap="truncate" inverse={start + i === cursor}>
            {l}
          </Text>
        ))}
      </Box>
    );
  }

  const openTitle = `${s.open?.benchmark ?? ""}  ${runs.find((r) => r.runId === s.open?.runId)?.model ?? ""}`;
  if (s.level === "examples") {
    const cursor = Math.min(s.exampleCursor, shown.length - 1);
    const start = windowStart(cursor, shown.length, listRows);
    return (
      <Box flexDirection="column">
        <Text bold color={theme.accent} wrap="truncate">{`${openTitle}  examples ${shown.length}/${records.length}  filter: ${s.filter}`}</Text>
        <Text color={theme.muted} wrap="truncate">
          {EXAMPLE_HEADER}
        </Text>
        {shown.length === 0 ? <Text color={theme.muted}>{"  no example matches the filter"}</Text> : null}
        {shown.slice(start, start + listRows).map((r, i) => (
          <Text key={r.example_id} wrap="truncate" inverse={start + i === cursor} color={r.error !== undefined ? theme.warn : undefined}>
            {exampleLine(r, width)}
          </Text>
        ))}
      </Box>
    );
  }
  const scroll = Math.min(s.detailScroll, Math.max(0, detail.length - listRows));
  return (
    <Box flexDirection="column">
      <Text
        bold
        color={theme.accent}
        wrap="truncate"
      >{`${openTitle}  example ${Math.min(s.exampleCursor, shown.length - 1) + 1}/${shown.length}  lines ${scroll + 1}-${Math.min(detail.length, scroll + listRows + 1)}/${detail.length}`}</Text>
      {detail.slice(scroll, scroll + listRows + 1).map((l, i) => (
        <Text
          key={scroll + i}
          wrap="truncate"
          color={l.startsWith("──") ? (l.includes("CORRECT") ? theme.ok : l.includes("WRONG") ? theme.error : theme.accent) : undefined}
        >
          {l}
        </Text>
      ))}
    </Box>
  );
}
