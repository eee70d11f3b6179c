// Timing: the time/* metrics of one step as bars (h/l moves between steps, t opens transcripts).
import { type ReactNode, useState } from "react";
import { Box, Text } from "ink";
import { fmtDuration } from "../../core/format.ts";
import { theme } from "../../core/palette.ts";
import { renderTimingBars, timingBreakdown } from "../../core/timing.ts";
import { useUIActions } from "../../state/contexts.tsx";
import { useRun } from "../hooks/useRun.ts";
import { useScreenKeys } from "../hooks/useScreenKeys.ts";

export function Timing({ runDir, step, rows, width }: { runDir: string; step?: number; rows: number; width: number }): ReactNode {
  const actions = useUIActions();
  const snap = useRun(runDir);
  const [idx, setIdx] = useState<number | undefined>(() => {
    if (step === undefined) return undefined;
    const i = snap.rows.findIndex((r) => r.step === step);
    return i >= 0 ? i : undefined;
  });
  const last = snap.rows.length - 1;
  const at = idx === undefined ? last : Math.min(idx, last);
  const row = snap.rows[at];
  useScreenKeys({
    capturing: false,
    onCommand: (cmd) => {
      if (cmd === "cursorLeft") setIdx(Math.max(0, at - 1));
      else if (cmd === "cursorRight") setIdx(at + 1 >= last ? undefined : at + 1);
      else if (cmd === "jumpTranscripts") actions.push({ name: "transcripts", runDir, step: typeof row?.step === "number" ? row.step : undefined });
      else return false;
      return true;
    },
  });
  if (!row) return <Text color={theme.muted}>no metrics yet</Text>;
  const b = timingBreakdown(row);
  const lines = renderTimingBars(b, width);
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent}>{`Timing  step ${String(row.step)}${idx === undefined ? " (latest, following)" : ""}  total ${b.total !== undefined ? fmtDuration(b.total) + ` (${b.total.toFixed(3)}s)` : "–"}  ${b.entries.length} spans`}</Text>
      {lines.length === 0 ? <Text color={theme.muted}>this step logged no time/* metrics</Text> : null}
      {lines.slice(0, rows - 1).map((l, i) => (
        <Text key={i} wrap="truncate" color={i === 0 ? theme.warn : undefined}>
          {l}
        </Text>
      ))}
    </Box>
  );
}
