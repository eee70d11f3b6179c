// Dashboard of one run: header with status and progress/ETA, live charts of the metrics that
// matter for its kind plus picked ones, EMA smoothing over the raw band, step/time x axis, a step
// cursor that jumps to transcripts, other runs overlaid in stable colours, and a logs.log pane.
import { type ReactNode, useMemo, useState } from "react";
import { basename } from "node:path";
import { Box, Text } from "ink";
import { EMA_WEIGHT, chartBlock, gridLayout, kindLabel } from "../../core/dashboard.ts";
import { eta, fit, fmtDuration, progressBar } from "../../core/format.ts";
import { colorEnabled, runColorName, statusColor, theme } from "../../core/palette.ts";
import { type XAxis, chartsFor, filterKeys, progressOf } from "../../core/series.ts";
import type { RunState } from "../../../runs/index.ts";
import { resumeRun } from "../../services/runActions.ts";
import { listRuns } from "../../services/runsPoller.ts";
import { useServices, useUIActions, useUIState } from "../../state/contexts.tsx";
import { editText, moveCursor, windowStart } from "../hooks/textEdit.ts";
import { useRun, useRuns } from "../hooks/useRun.ts";
import { useScreenKeys } from "../hooks/useScreenKeys.ts";
import { ChartText } from "../components/ChartText.tsx";

interface Picker {
  kind: "metric" | "overlay";
  filter: string;
  typing: boolean;
  cursor: number;
}

/**
 * Charts follow new data at most this often (spec: 250–500 ms is enough for charts). Every Ink
 * frame re-measures and re-tokenises all chart lines (tens of ms for a full screen), so frames
 * per second, not rows per second, is what costs CPU while a run is tailed.
 */
export const CHART_REFRESH_MS = 250;

/** Wall-clock seconds the run has been going (to its end when it ended), from run.json. */
export function wallSeconds(state: RunState, now = Date.now()): number | undefined {
  const m = state.manifest;
  if (!m) return undefined;
  const end = m.ended_at ? Date.parse(m.ended_at) : state.live ? now : Date.parse(m.heartbeat_at);
  return Math.max(0, (end - Date.parse(m.started_at)) / 1000);
}

export function Dashboard({ runDir, rows, width }: { runDir: string; rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const { overlays } = useUIState();
  const refreshMs = Math.max(services.pollMs, CHART_REFRESH_MS);
  const snap = useRun(runDir, refreshMs);
  const others = useRuns(
    useMemo(() => overlays.filter((d) => d !== runDir), [overlays, runDir]),
    refreshMs,
  );
  const [smooth, setSmooth] = useState(false);
  const [xAxis, setXAxis] = useState<XAxis>("step");
  const [showLog, setShowLog] = useState(true);
  const [added, setAdded] = useState<string[]>([]);
  const [removed, setRemoved] = useState<string[]>([]);
  const [picker, setPicker] = useState<Picker | undefined>();
  const [cursorIdx, setCursorIdx] = useState<number | undefined>();
  const [runChoices, setRunChoices] = useState<string[]>([]);

  const charts = useMemo(() => {
    const base = chartsFor(snap.kind, snap.keys).filter((k) => !removed.includes(k));
    return [...base, ...added.filter((k) => !base.includes(k))];
  }, [snap.kind, snap.keys, added, removed]);

  const pickerItems = picker ? filterKeys(picker.kind === "metric" ? snap.keys : runChoices, picker.filter) : [];
  const lastIdx = snap.rows.length - 1;
  const cursorRow = cursorIdx === undefined ? undefined : snap.rows[Math.min(cursorIdx, lastIdx)];
  const cursorStep = typeof cursorRow?.step === "number" ? cursorRow.step : undefined;
  const cursorX = cursorIdx === undefined ? undefined : xAxis === "time" ? snap.elapsed[Math.min(cursorIdx, lastIdx)] : cursorStep;

  useScreenKeys({
    capturing: picker?.typing ?? false,
    onRaw: (input, key) => {
      if (!picker) return;
      if (key.escape || key.return) setPicker({ ...picker, typing: false });
      else setPicker({ ...picker, filter: editText(picker.filter, input, key), cursor: 0 });
    },
    onCommand: (cmd) => {
      if (picker) {
        const moved = moveCursor(cmd, picker.cursor, pickerItems.length);
        if (moved !== undefined) {
          setPicker({ ...picker, cursor: moved });
          return true;
        }
        if (cmd === "filter") {
          setPicker({ ...picker, typing: true });
          return true;
        }
        if (cmd === "open") {
          const item = pickerItems[picker.cursor];
          if (item && picker.kind === "metric") {
            if (charts.includes(item)) {
              setAdded(added.filter((k) => k !== item));
              setRemoved([...removed, item]);
            } else {
              setRemoved(removed.filter((k) => k !== item));
              setAdded([...added, item]);
            }
          } else if (item) actions.toggleOverlay(item);
          return true;
        }
        if (cmd === "back" || cmd === "pickMetric" || cmd === "overlay") {
          setPicker(undefined);
          return true;
        }
        return cmd !== "quit" && cmd !== "help";
      }
      switch (cmd) {
        case "smoothing":
          setSmooth(!smooth);
          return true;
        case "xAxis":
          setXAxis(xAxis === "step" ? "time" : "step");
          return true;
        case "logPane":
          setShowLog(!showLog);
          return true;
        case "pickMetric":
        case "filter":
          setPicker({ kind: "metric", filter: "", typing: cmd === "filter", cursor: 0 });
          return true;
        case "overlay":
          setRunChoices(listRuns(services.logRoot).map((r) => r.dir).filter((d) => d !== runDir));
          setPicker({ kind: "overlay", filter: "", typing: false, cursor: 0 });
          return true;
        case "cursorLeft":
          setCursorIdx(Math.max(0, (cursorIdx ?? lastIdx) - Math.max(1, Math.round(snap.rows.length / 60))));
          return true;
        case "cursorRight": {
          const next = (cursorIdx ?? lastIdx) + Math.max(1, Math.round(snap.rows.length / 60));
          setCursorIdx(next >= lastIdx ? undefined : next);
          return true;
        }
        case "jumpTranscripts":
        case "open": {
          const last = snap.rows[lastIdx]?.step;
          actions.push({ name: "transcripts", runDir, step: cursorStep ?? (typeof last === "number" ? last : undefined) });
          return true;
        }
        case "checkpointNow":
          services.processes.checkpoint(runDir);
          return true;
        case "stopRun":
          services.processes.stop(runDir);
          return true;
        case "resumeRun": {
          try {
            const res = resumeRun(services.processes, runDir);
            actions.info(`resumed (pid ${res.pid})`);
          } catch (err) {
            // e.g. the run is still live: its writer holds the lock.
            actions.error((err as Error).message);
          }
          return true;
        }
        case "back":
          if (cursorIdx !== undefined) {
            setCursorIdx(undefined);
            return true;
          }
          return false;
        default:
          return false;
      }
    },
  });

  const progress = progressOf(snap.rows);
  const elapsed = wallSeconds(snap.state) ?? snap.elapsed[lastIdx] ?? 0;
  const left = snap.state.live ? eta(elapsed, progress) : undefined;
  const lastStep = snap.rows[lastIdx]?.step;
  const m = snap.state.manifest;

  const logRows = showLog ? Math.min(8, Math.max(3, Math.floor(rows / 5))) : 0;
  const pickerRows = picker ? Math.min(10, Math.max(4, Math.floor(rows / 3))) : 0;
  const chartArea = Math.max(0, rows - 3 - logRows - pickerRows);
  const grid = gridLayout(charts.length, width, chartArea);
  const colWidth = Math.floor(width / grid.columns) - (grid.columns > 1 ? 1 : 0);
  const runsForCharts = useMemo(
    () => [
      { name: basename(runDir), rows: snap.rows, elapsed: snap.elapsed, cache: snap.cache },
      ...others.map((o) => ({ name: basename(o.dir), rows: o.rows, elapsed: o.elapsed, cache: o.cache })),
    ],
    // The arrays are append-only: versions say when they changed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [snap.version, others.map((o) => o.version).join(",")],
  );
  const color = colorEnabled();
  const blocks = useMemo(
    () =>
      charts
        .slice(0, grid.shown)
        .map((key) => {
          const lines = chartBlock(runsForCharts, { key, width: colWidth, rows: grid.chartRows, smoothing: smooth ? EMA_WEIGHT : 0, xAxis, cursorX, color });
          // Split once here so ChartText's memo sees the same array until the chart changes.
          return { title: lines[0], body: lines.slice(1) };
        }),
    [charts, grid.shown, grid.chartRows, colWidth, runsForCharts, smooth, xAxis, cursorX, color],
  );
  const gridRows: (typeof blocks)[] = [];
  for (let i = 0; i < blocks.length; i += grid.columns) gridRows.push(blocks.slice(i, i + grid.columns));

  const pickerStart = picker ? windowStart(picker.cursor, pickerItems.length, pickerRows - 1) : 0;

  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold color={theme.accent}>
          {basename(runDir)}
        </Text>
        {"  "}
        <Text color={statusColor(snap.state.status)}>{snap.state.live ? "● live" : snap.state.status}</Text>
        <Text color={theme.muted}>{`  ${m?.recipe ?? "?"} · ${kindLabel(snap.kind)}${m ? ` · pid ${m.pid} · ${m.engine}` : ""}${others.length ? " · overlay: " : ""}`}</Text>
        {others.map((o, i) => (
          <Text key={o.dir} color={runColorName(i + 1)}>{`${basename(o.dir)} `}</Text>
        ))}
      </Text>
      <Text wrap="truncate">
        {`step ${lastStep ?? "–"}  `}
        {progress !== undefined ? progressBar(progress, Math.min(40, Math.max(12, width - 60))) : ""}
        <Text color={theme.muted}>{`  elapsed ${fmtDuration(elapsed)}${left !== undefined ? `  ETA ${fmtDuration(left)}` : ""}  x:${xAxis}  ${smooth ? "EMA on" : "raw"}${cursorStep !== undefined ? `  cursor step ${cursorStep} (t: transcripts)` : ""}`}</Text>
      </Text>
      <Box flexDirection="column" height={chartArea} overflowY="hidden">
        {charts.length === 0 ? <Text color={theme.muted}>{snap.rows.length === 0 ? "waiting for metrics.jsonl…" : "no numeric metrics"}</Text> : null}
        {gridRows.map((row, r) => (
          <Box key={r} flexDirection="row" height={grid.chartRows}>
            {row.map((block, c) => (
              <Box key={c} flexDirection="column" width={colWidth + (grid.columns > 1 ? 1 : 0)}>
                <Text bold wrap="truncate">
                  {block.title}
                </Text>
                {/* One node per chart: lines are already cut to the width, and Ink measures less. */}
                <ChartText lines={block.body} />
              </Box>
            ))}
          </Box>
        ))}
      </Box>
      <Text color={theme.muted} wrap="truncate">
        {fit(
          grid.shown < charts.length ? `+${charts.length - grid.shown} more charts (enlarge the terminal or m to remove some)` : `charts: ${charts.join(", ")}`,
          width,
        )}
      </Text>
      {picker ? (
        <Box flexDirection="column" height={pickerRows} borderStyle="single" borderTop borderBottom={false} borderLeft={false} borderRight={false}>
          <Text color={theme.accent} wrap="truncate">
            {`${picker.kind === "metric" ? "metrics" : "overlay runs"} (enter toggles, / filters, esc closes): ${picker.filter}${picker.typing ? "▏" : ""}`}
          </Text>
          {pickerItems.slice(pickerStart, pickerStart + pickerRows - 2).map((item, i) => {
            const on = picker.kind === "metric" ? charts.includes(item) : overlays.includes(item);
            const sel = pickerStart + i === picker.cursor;
            return (
              <Text key={item} inverse={sel} wrap="truncate">
                {`${on ? "[x]" : "[ ]"} ${picker.kind === "overlay" ? basename(item) : item}`}
              </Text>
            );
          })}
        </Box>
      ) : null}
      {showLog ? (
        <Box flexDirection="column" height={logRows}>
          <Text color={theme.muted} wrap="truncate">
            {fit(`── logs.log ${"─".repeat(width)}`, width)}
          </Text>
          {snap.logLines.slice(-(logRows - 1)).map((l, i) => (
            <Text key={i} wrap="truncate">
              {l}
            </Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}

