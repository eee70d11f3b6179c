// The dashboard's two header rows: run, status, recipe, kind, overlays; then step, progress,
// elapsed/ETA, x axis, smoothing with its EMA weight, and the step cursor.
import type { ReactNode } from "react";
import { basename } from "node:path";
import { Text } from "ink";
import { kindLabel } from "../../../core/dashboard.ts";
import { eta, fmtDuration, progressBar } from "../../../core/format.ts";
import { runColorName, statusColor, theme } from "../../../core/palette.ts";
import { progressOf } from "../../../core/series.ts";
import type { RunState } from "../../../../runs/index.ts";
import type { RunSnapshot } from "../../../services/runTailer.ts";
import type { DashboardState } from "./dashboardState.ts";

/** Wall-clock seconds the run has been going (to its end when it ended), from run.json. */
export function wallSeconds(state: RunState, now = Date.now()): number | undefined {
  const m = state.manifest;
  if (!m) return undefined;
  const end = m.ended_at ? Date.parse(m.ended_at) : state.live ? now : Date.parse(m.heartbeat_at);
  return Math.max(0, (end - Date.parse(m.started_at)) / 1000);
}

/** `EMA 0.90` when smoothing is on, `raw` otherwise. */
export function smoothingLabel(s: Pick<DashboardState, "smooth" | "emaWeight">): string {
  return s.smooth ? `EMA ${s.emaWeight.toFixed(2)}` : "raw";
}

export interface DashboardHeaderProps {
  runDir: string;
  snap: RunSnapshot;
  overlays: readonly string[];
  state: DashboardState;
  cursorStep?: number;
  width: number;
}

export function DashboardHeader({ runDir, snap, overlays, state, cursorStep, width }: DashboardHeaderProps): ReactNode {
  const m = snap.state.manifest;
  const lastIdx = snap.rows.length - 1;
  const progress = progressOf(snap.rows);
  const elapsed = wallSeconds(snap.state) ?? snap.elapsed[lastIdx] ?? 0;
  const left = snap.state.live ? eta(elapsed, progress) : undefined;
  const lastStep = snap.rows[lastIdx]?.step;
  return (
    <>
      <Text wrap="truncate">
        <Text bold color={theme.accent}>
          {basename(runDir)}
        </Text>
        {"  "}
        <Text color={statusColor(snap.state.status)}>{snap.state.live ? "● live" : snap.state.status}</Text>
        <Text
          color={theme.muted}
        >{`  ${m?.recipe ?? "?"} · ${kindLabel(snap.kind)}${m ? ` · pid ${m.pid} · ${m.engine}` : ""}${overlays.length ? " · overlay: " : ""}`}</Text>
        {overlays.map((dir, i) => (
          <Text key={dir} color={runColorName(i + 1)}>{`${basename(dir)} `}</Text>
        ))}
      </Text>
      <Text wrap="truncate">
        {`step ${lastStep ?? "–"}  `}
        {progress !== undefined ? progressBar(progress, Math.min(40, Math.max(12, width - 60))) : ""}
        <Text
          color={theme.muted}
        >{`  elapsed ${fmtDuration(elapsed)}${left !== undefined ? `  ETA ${fmtDuration(left)}` : ""}  x:${state.xAxis}  ${smoothingLabel(state)}${cursorStep !== undefined ? `  cursor step ${cursorStep} (t: transcripts)` : ""}${snap.partial ? "  · reading earlier rows…" : ""}`}</Text>
      </Text>
    </>
  );
}
