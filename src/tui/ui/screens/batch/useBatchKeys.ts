// The Batch screen's keys: cursor moves and the launch dialog go to the reducer; opening
// dashboards, overlays, launching and stopping batches go to the app and the process manager.
import type { Dispatch } from "react";
import { basename } from "node:path";
import type { BatchListing, BatchView } from "../../../../experiments/batches.ts";
import type { Route } from "../../../state/routes.ts";
import type { BatchCommand } from "./batchKeys.ts";
import { type ScreenKeyHandler, useServices, useUIActions, useUIState } from "../../../state/contexts.tsx";
import { type BatchScreenAction, type BatchScreenState, batchPlace, filterFiles, handlesBack, launchTarget } from "./batchState.ts";

const MOVES = ["up", "down", "top", "bottom", "pageUp", "pageDown"];

export interface BatchKeysInput {
  state: BatchScreenState;
  dispatch: Dispatch<BatchScreenAction>;
  batches: readonly BatchListing[];
  view: BatchView | undefined;
  files: readonly string[];
  rows: number;
}

export function useBatchKeys({ state: s, dispatch, batches, view, files, rows }: BatchKeysInput): ScreenKeyHandler<BatchCommand> {
  const services = useServices();
  const actions = useUIActions();
  const { overlays } = useUIState();
  const selectedBatch = batches[Math.min(s.batchCursor, batches.length - 1)];
  const runs = view?.runs ?? [];
  const selectedRun = runs[Math.min(s.runCursor, runs.length - 1)];

  // Leaving for a dashboard records where the person was, so esc comes back to this batch and row.
  const leaveTo = (route: Route): void => {
    actions.replace({ name: "batch", place: batchPlace(s) });
    actions.push(route);
  };

  const launch = (): void => {
    if (s.launch === undefined) return;
    const target = launchTarget(s.launch, files);
    if (target === undefined) {
      dispatch({ type: "launchError", error: "type the path of an experiment file (*.ts, *.json, *.yaml)" });
      return;
    }
    const root = services.experimentRoots.find((r) => target.startsWith(`${r}/`)) ?? services.experimentRoots[0] ?? "experiments";
    services.processes.launchBatch({ file: target, root }).then(
      (res) => {
        dispatch({ type: "launched", pending: { file: res.file, pid: res.pid, logFile: res.logFile, at: res.at } });
        actions.info(`launched cookbook batch ${basename(res.file)} (pid ${res.pid})`);
      },
      (err: Error) => dispatch({ type: "launchError", error: err.message }),
    );
  };

  const overlayAll = (): void => {
    const started = runs.filter((r) => r.started);
    if (started.length === 0) {
      actions.info("no run of this batch has started yet");
      return;
    }
    const main = selectedRun?.started === true ? selectedRun : started[0]!;
    const others = started.filter((r) => r.dir !== main.dir).map((r) => r.dir);
    // The dashboard overlays the app's overlay set: make it exactly this batch's other runs.
    for (const d of overlays) if (!others.includes(d)) actions.toggleOverlay(d);
    for (const d of others) if (!overlays.includes(d)) actions.toggleOverlay(d);
    leaveTo({ name: "dashboard", runDir: main.dir });
  };

  const stop = (): void => {
    const state = s.open === undefined ? selectedBatch?.state : view?.state;
    if (state?.pid === undefined) actions.error("no running batch selected");
    else {
      services.processes.stopBatch(state.pid, state.experiment);
      actions.info(`sent SIGINT to batch ${state.experiment} (pid ${state.pid}): its running runs save and stop`);
    }
  };

  return {
    capturing: s.launch !== undefined,
    onRaw: (input, key) => {
      if (key.return) launch();
      else dispatch({ type: "launchKey", input, key, count: filterFiles(files, s.launch?.text ?? "").length });
    },
    onCommand: (cmd) => {
      if (MOVES.includes(cmd)) {
        dispatch({ type: "move", cmd, count: s.open === undefined ? batches.length : runs.length, page: Math.max(1, rows - 8) });
        return true;
      }
      switch (cmd) {
        case "open":
          if (s.open === undefined) {
            if (selectedBatch !== undefined) dispatch({ type: "openBatch", dir: selectedBatch.dir });
          } else if (selectedRun !== undefined) {
            if (selectedRun.started) leaveTo({ name: "dashboard", runDir: selectedRun.dir });
            else actions.info(`${selectedRun.name} is ${selectedRun.status}: it has no run directory yet`);
          }
          return true;
        case "launchBatch":
          dispatch({ type: "openLaunch" });
          return true;
        case "overlayBatch":
          if (s.open === undefined) actions.info("open a batch first (enter), then o overlays its runs");
          else overlayAll();
          return true;
        case "stopBatch":
          stop();
          return true;
        case "back":
          if (!handlesBack(s)) return false;
          dispatch({ type: "back" });
          return true;
        default:
          return false;
      }
    },
  };
}
