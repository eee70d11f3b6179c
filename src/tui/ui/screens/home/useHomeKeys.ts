// The home screen's keys: cursor, pane and filter changes go to the reducer; opening screens,
// stopping, resuming and deleting runs go to the app and to services.
import type { Dispatch } from "react";
import { deleteRefusal, deleteRunDir } from "../../../../runs/index.ts";
import { resumeRun } from "../../../services/runActions.ts";
import type { RunRow } from "../../../services/runsPoller.ts";
import type { HomeCommand } from "./homeKeys.ts";
import { type ScreenKeyHandler, useServices, useUIActions } from "../../../state/contexts.tsx";
import { type HomeAction, type HomeState, dialogConfirmed, homePlace } from "./homeState.ts";
import type { Route } from "../../../state/routes.ts";

export interface HomeKeysInput {
  state: HomeState;
  dispatch: Dispatch<HomeAction>;
  shown: readonly RunRow[];
  refresh: () => void;
  rows: number;
}

export function useHomeKeys({ state: s, dispatch, shown, refresh, rows }: HomeKeysInput): ScreenKeyHandler<HomeCommand> {
  const services = useServices();
  const actions = useUIActions();
  const selectedRun = shown[Math.min(s.runCursor, shown.length - 1)];

  // Leaving home records where the person was in the home route, so esc brings them back there.
  const leaveTo = (route: Route): void => {
    actions.replace({ name: "home", place: homePlace(s) });
    actions.push(route);
  };

  const onRun = (fn: (run: RunRow) => void | Promise<void>): boolean => {
    if (!selectedRun) actions.error("no run selected");
    else
      Promise.resolve()
        .then(() => fn(selectedRun))
        .catch((err: Error) => actions.error(err.message));
    return true;
  };

  return {
    capturing: s.filtering || s.dialog !== undefined,
    onRaw: (input, key) => {
      if (key.return && dialogConfirmed(s.dialog)) {
        const d = s.dialog;
        try {
          deleteRunDir(d.dir);
          actions.info(`deleted ${d.dir}`);
          dispatch({ type: "closeDialog" });
          refresh();
        } catch (err) {
          dispatch({ type: "dialogError", error: (err as Error).message });
        }
      } else dispatch({ type: "type", input, key });
    },
    onCommand: (cmd) => {
      switch (cmd) {
        case "up":
        case "down":
        case "top":
        case "bottom":
        case "pageUp":
        case "pageDown":
          dispatch({ type: "move", cmd, count: s.pane === "recipes" ? services.recipes.length : shown.length, page: Math.max(1, rows - 8) });
          return true;
        case "nextPane":
          dispatch({ type: "nextPane" });
          return true;
        case "filter":
          dispatch({ type: "startFilter" });
          return true;
        case "refresh":
          refresh();
          return true;
        case "openBatches":
          leaveTo({ name: "batch" });
          return true;
        case "openEvals":
          leaveTo({ name: "evals" });
          return true;
        case "playRecipe": {
          const recipe = services.recipes[s.recipeCursor];
          if (s.pane !== "recipes" || !recipe) {
            actions.info("pick a recipe in the recipes pane (tab), then p plays its environment");
            return true;
          }
          leaveTo({ name: "play", recipe: recipe.name });
          return true;
        }
        case "open": {
          const recipe = services.recipes[s.recipeCursor];
          if (s.pane === "recipes" && recipe) leaveTo({ name: "launch", recipe: recipe.name });
          else if (s.pane === "runs" && selectedRun) leaveTo({ name: "dashboard", runDir: selectedRun.dir });
          return true;
        }
        case "stopRun":
          return onRun((r) => services.processes.stop(r.dir));
        case "resumeRun":
          return onRun(async (r) => actions.info(`resumed ${r.name} (pid ${(await resumeRun(services.processes, r.dir)).pid})`));
        case "deleteRun":
          return onRun((r) => dispatch({ type: "openDialog", dialog: { dir: r.dir, name: r.name, typed: "", refusal: deleteRefusal(r.dir) } }));
        case "back":
          if (!s.filter) return false;
          dispatch({ type: "clearFilter" });
          return true;
        default:
          return false;
      }
    },
  };
}
