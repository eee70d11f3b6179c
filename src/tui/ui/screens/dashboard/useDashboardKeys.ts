// The dashboard's key handler: picker keys while the picker is open, otherwise its commands.
// State changes go to the reducer; signals and launches go to the process manager.
import type { Dispatch } from "react";
import type { Key } from "ink";
import { resumeRun } from "../../../services/runActions.ts";
import type { RunSnapshot } from "../../../services/runTailer.ts";
import { listRuns } from "../../../services/runsPoller.ts";
import type { DashboardCommand } from "./dashboardKeys.ts";
import { type ScreenKeyHandler, useServices, useUIActions } from "../../../state/contexts.tsx";
import type { DashboardAction, DashboardState } from "./dashboardState.ts";

const MOVES = ["up", "down", "top", "bottom", "pageUp", "pageDown"];

export interface DashboardKeysInput {
  runDir: string;
  state: DashboardState;
  dispatch: Dispatch<DashboardAction>;
  snap: RunSnapshot;
  charts: readonly string[];
  pickerItems: readonly string[];
  cursorStep?: number;
  configCount: number;
}

export function useDashboardKeys({
  runDir,
  state: s,
  dispatch,
  snap,
  charts,
  pickerItems,
  cursorStep,
  configCount,
}: DashboardKeysInput): ScreenKeyHandler<DashboardCommand> {
  const services = useServices();
  const actions = useUIActions();
  const picker = s.picker;

  const pickerCommand = (cmd: DashboardCommand): boolean => {
    if (!picker) return false;
    if (MOVES.includes(cmd)) dispatch({ type: "pickerMove", cmd, count: pickerItems.length });
    else if (cmd === "filter") dispatch({ type: "pickerTyping" });
    else if (cmd === "open") {
      const item = pickerItems[picker.cursor];
      if (item && picker.kind === "metric") dispatch({ type: "toggleMetric", key: item, charted: charts.includes(item) });
      else if (item) actions.toggleOverlay(item);
    } else if (cmd === "back" || cmd === "pickMetric" || cmd === "overlay") dispatch({ type: "closePicker" });
    // Everything else but quit and help is swallowed while the picker is open.
    else return cmd !== "quit" && cmd !== "help";
    return true;
  };

  const command = (cmd: DashboardCommand): boolean => {
    switch (cmd) {
      case "smoothing":
        dispatch({ type: "toggleSmoothing" });
        return true;
      case "emaUp":
      case "emaDown":
        dispatch({ type: "emaStep", direction: cmd === "emaUp" ? 1 : -1 });
        return true;
      case "xAxis":
        dispatch({ type: "toggleXAxis" });
        return true;
      case "logPane":
        dispatch({ type: "toggleLog" });
        return true;
      case "configPane":
        dispatch({ type: "toggleConfig" });
        return true;
      case "pageUp":
      case "pageDown":
        if (!s.showConfig) return false;
        dispatch({ type: "scrollConfig", by: cmd === "pageDown" ? 10 : -10, count: configCount });
        return true;
      case "pickMetric":
      case "filter":
        dispatch({ type: "openPicker", kind: "metric", typing: cmd === "filter" });
        return true;
      case "overlay":
        dispatch({
          type: "openPicker",
          kind: "overlay",
          typing: false,
          choices: listRuns(services.logRoot)
            .map((r) => r.dir)
            .filter((d) => d !== runDir),
        });
        return true;
      case "cursorLeft":
      case "cursorRight":
        dispatch({ type: "cursor", direction: cmd === "cursorLeft" ? -1 : 1, rows: snap.rows.length });
        return true;
      case "jumpTranscripts":
      case "open": {
        const last = snap.rows[snap.rows.length - 1]?.step;
        actions.push({ name: "transcripts", runDir, step: cursorStep ?? (typeof last === "number" ? last : undefined) });
        return true;
      }
      case "checkpointNow":
        services.processes.checkpoint(runDir);
        return true;
      case "stopRun":
        services.processes.stop(runDir);
        return true;
      case "resumeRun":
        resumeRun(services.processes, runDir).then(
          (res) => actions.info(`resumed (pid ${res.pid})`),
          (err: Error) => actions.error(err.message),
        );
        return true;
      case "back":
        if (s.cursorIdx === undefined) return false;
        dispatch({ type: "clearCursor" });
        return true;
      default:
        return false;
    }
  };

  return {
    capturing: picker?.typing ?? false,
    onRaw: (input: string, key: Key) => dispatch({ type: "pickerType", input, key }),
    onCommand: (cmd) => (picker ? pickerCommand(cmd) : command(cmd)),
  };
}
