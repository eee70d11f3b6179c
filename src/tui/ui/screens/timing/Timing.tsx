// Timing: the time/* metrics of one step as bars (h/l moves between steps, t opens transcripts).
import { type ReactNode, useReducer } from "react";
import { Box, Text } from "ink";
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand, type RunCommand } from "../../../keys/keymap.ts";
import { fmtDuration } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { renderTimingBars, timingBreakdown } from "../../../core/timing.ts";
import { useUIActions } from "../../../state/contexts.tsx";
import { useRun } from "../../hooks/useRun.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { shownIndex, timingReducer } from "./timingState.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type TimingRoute = RouteOf<"timing">;

export const TIMING_KEYS = [COMMON.cursorLeft, COMMON.cursorRight, COMMON.jumpTranscripts] as const satisfies readonly Binding[];
type TimingCommand = CommandOf<typeof TIMING_KEYS> | GlobalCommand | ListCommand | RunCommand;

export function Timing({ route, rows, width }: { route: TimingRoute; rows: number; width: number }): ReactNode {
  const actions = useUIActions();
  const snap = useRun(route.runDir);
  const [s, dispatch] = useReducer(timingReducer, undefined, () => {
    const i = route.step === undefined ? -1 : snap.rows.findIndex((r) => r.step === route.step);
    return { idx: i >= 0 ? i : undefined };
  });
  const last = snap.rows.length - 1;
  const row = snap.rows[shownIndex(s, last)];
  useScreenKeys<TimingCommand>({
    capturing: false,
    onCommand: (cmd) => {
      if (cmd === "cursorLeft") dispatch({ type: "left", last });
      else if (cmd === "cursorRight") dispatch({ type: "right", last });
      else if (cmd === "jumpTranscripts")
        actions.push({ name: "transcripts", runDir: route.runDir, step: typeof row?.step === "number" ? row.step : undefined });
      else return false;
      return true;
    },
  });
  if (!row) return <Text color={theme.muted}>no metrics yet</Text>;
  const b = timingBreakdown(row);
  const lines = renderTimingBars(b, width);
  return (
    <Box flexDirection="column">
      <Text
        bold
        color={theme.accent}
      >{`Timing  step ${String(row.step)}${s.idx === undefined ? " (latest, following)" : ""}  total ${b.total !== undefined ? fmtDuration(b.total) + ` (${b.total.toFixed(3)}s)` : "–"}  ${b.entries.length} spans`}</Text>
      {lines.length === 0 ? <Text color={theme.muted}>this step logged no time/* metrics</Text> : null}
      {lines.slice(0, rows - 1).map((l, i) => (
        <Text key={i} wrap="truncate" color={i === 0 ? theme.warn : undefined}>
          {l}
        </Text>
      ))}
    </Box>
  );
}
