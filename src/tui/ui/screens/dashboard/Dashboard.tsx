// Dashboard of one run: header with status and progress/ETA, live charts of the metrics that
// matter for its kind plus picked ones, EMA smoothing (adjustable weight) over the raw band,
// step/time x axis, a step cursor that jumps to transcripts, other runs overlaid in stable
// colours, a logs.log pane and a config pane.
import { type ReactNode, useMemo, useReducer } from "react";
import { basename } from "node:path";
import { Box, Text } from "ink";
import { chartBlock, gridLayout } from "../../../core/dashboard.ts";
import { fit } from "../../../core/format.ts";
import { colorEnabled, theme } from "../../../core/palette.ts";
import { configEntries } from "../../../core/runConfig.ts";
import { chartsFor, filterKeys } from "../../../core/series.ts";
import { useServices, useUIState } from "../../../state/contexts.tsx";
import { useRun, useRuns } from "../../hooks/useRun.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { ChartGrid } from "./ChartGrid.tsx";
import { DashboardHeader } from "./DashboardHeader.tsx";
import { chartKeys, dashboardReducer, initialDashboard } from "./dashboardState.ts";
import { useDashboardKeys } from "./useDashboardKeys.ts";
import { PickerPane } from "./PickerPane.tsx";
import { ConfigPane, LogPane } from "./SidePanes.tsx";
import type { RouteOf } from "../../../state/routes.ts";

export type DashboardRoute = RouteOf<"dashboard">;

/**
 * Charts follow new data at most this often (250–500 ms is enough for charts). Every Ink
 * frame re-measures and re-tokenises all chart lines (tens of ms for a full screen), so frames
 * per second, not rows per second, is what costs CPU while a run is tailed.
 */
export const CHART_REFRESH_MS = 250;

export function Dashboard({ route, rows, width }: { route: DashboardRoute; rows: number; width: number }): ReactNode {
  const { runDir } = route;
  const services = useServices();
  const { overlays } = useUIState();
  const refreshMs = Math.max(services.pollMs, CHART_REFRESH_MS);
  const snap = useRun(runDir, refreshMs);
  const others = useRuns(
    useMemo(() => overlays.filter((d) => d !== runDir), [overlays, runDir]),
    refreshMs,
  );
  const [s, dispatch] = useReducer(dashboardReducer, initialDashboard);
  const charts = useMemo(() => chartKeys(s, chartsFor(snap.kind, snap.keys)), [s, snap.kind, snap.keys]);
  const config = useMemo(() => configEntries(snap.config), [snap.config]);
  const { picker } = s;
  const pickerItems = picker ? filterKeys(picker.kind === "metric" ? snap.keys : picker.choices, picker.filter) : [];
  const lastIdx = snap.rows.length - 1;
  const cursorRow = s.cursorIdx === undefined ? undefined : snap.rows[Math.min(s.cursorIdx, lastIdx)];
  const cursorStep = typeof cursorRow?.step === "number" ? cursorRow.step : undefined;
  const cursorX = s.cursorIdx === undefined ? undefined : s.xAxis === "time" ? snap.elapsed[Math.min(s.cursorIdx, lastIdx)] : cursorStep;

  useScreenKeys(useDashboardKeys({ runDir, state: s, dispatch, snap, charts, pickerItems, cursorStep, configCount: config.length }));

  const logRows = s.showLog ? Math.min(8, Math.max(3, Math.floor(rows / 5))) : 0;
  const pickerRows = picker ? Math.min(10, Math.max(4, Math.floor(rows / 3))) : 0;
  const chartArea = Math.max(0, rows - 3 - logRows - pickerRows);
  const configW = s.showConfig ? Math.min(48, Math.max(24, Math.floor(width * 0.3))) : 0;
  const chartsW = width - configW - (configW > 0 ? 1 : 0);
  const grid = gridLayout(charts.length, chartsW, chartArea);
  const colWidth = Math.floor(chartsW / grid.columns) - (grid.columns > 1 ? 1 : 0);
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
  const smoothing = s.smooth ? s.emaWeight : 0;
  const blocks = useMemo(
    () =>
      charts.slice(0, grid.shown).map((key) => {
        const lines = chartBlock(runsForCharts, { key, width: colWidth, rows: grid.chartRows, smoothing, xAxis: s.xAxis, cursorX, color });
        // Split once here so ChartText's memo sees the same array until the chart changes.
        return { title: lines[0], body: lines.slice(1) };
      }),
    [charts, grid.shown, grid.chartRows, colWidth, runsForCharts, smoothing, s.xAxis, cursorX, color],
  );
  const empty = charts.length === 0 ? (snap.rows.length === 0 ? "waiting for metrics.jsonl…" : "no numeric metrics") : undefined;

  return (
    <Box flexDirection="column">
      <DashboardHeader runDir={runDir} snap={snap} overlays={others.map((o) => o.dir)} state={s} cursorStep={cursorStep} width={width} />
      <Box flexDirection="row" height={chartArea}>
        <ChartGrid blocks={blocks} grid={grid} colWidth={colWidth} height={chartArea} empty={empty} />
        {configW > 0 ? (
          <Box marginLeft={1}>
            <ConfigPane entries={config} scroll={s.configScroll} rows={chartArea} width={configW} />
          </Box>
        ) : null}
      </Box>
      <Text color={theme.muted} wrap="truncate">
        {fit(
          grid.shown < charts.length ? `+${charts.length - grid.shown} more charts (enlarge the terminal or m to remove some)` : `charts: ${charts.join(", ")}`,
          width,
        )}
      </Text>
      {picker ? (
        <PickerPane
          picker={picker}
          items={pickerItems}
          isOn={(item) => (picker.kind === "metric" ? charts.includes(item) : overlays.includes(item))}
          rows={pickerRows}
        />
      ) : null}
      {s.showLog ? <LogPane lines={snap.logLines} rows={logRows} width={width} /> : null}
    </Box>
  );
}
