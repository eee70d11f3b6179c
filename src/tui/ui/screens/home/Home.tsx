// Home: the recipe menu (launch) and the runs of the log root (open, stop, resume, delete).
import { type ReactNode, useMemo, useReducer } from "react";
import { Box, Text } from "ink";
import { deleteRefusal, deleteRunDir } from "../../../../runs/index.ts";
import { theme } from "../../../core/palette.ts";
import { resumeRun } from "../../../services/runActions.ts";
import type { RunRow } from "../../../services/runsPoller.ts";
import type { Route } from "../../../state/app.ts";
import { useServices, useUIActions } from "../../../state/contexts.tsx";
import { TypedConfirm } from "../../components/TypedConfirm.tsx";
import { useRunsList } from "../../hooks/useRunsList.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { dialogConfirmed, homeReducer, initialHome } from "./homeState.ts";
import { RecipeMenu } from "./RecipeMenu.tsx";
import { RunsTable, filterRuns } from "./RunsTable.tsx";

export type HomeRoute = { name: "home" };

export function Home({ rows, width }: { route: Route; rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const [runs, refresh] = useRunsList(services.logRoot);
  const [s, dispatch] = useReducer(homeReducer, runs.length > 0, initialHome);
  const shown = useMemo(() => filterRuns(runs, s.filter), [runs, s.filter]);
  const selectedRun = shown[Math.min(s.runCursor, shown.length - 1)];

  const onRun = (fn: (run: RunRow) => void | Promise<void>): boolean => {
    if (!selectedRun) actions.error("no run selected");
    else Promise.resolve().then(() => fn(selectedRun)).catch((err: Error) => actions.error(err.message));
    return true;
  };

  useScreenKeys({
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
        case "open": {
          const recipe = services.recipes[s.recipeCursor];
          if (s.pane === "recipes" && recipe) actions.push({ name: "launch", recipe: recipe.name });
          else if (s.pane === "runs" && selectedRun) actions.push({ name: "dashboard", runDir: selectedRun.dir });
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
  });

  const recipeRows = Math.min(services.recipes.length, Math.max(2, Math.floor((rows - 6) / 3)));
  const runRows = Math.max(1, rows - recipeRows - 6 - (s.dialog ? 5 : 0));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold color={theme.accent}>
          tinker-cookbook
        </Text>
        <Text color={theme.muted}>{`  log root ${services.logRoot}  ·  engine ${services.engineLabel}`}</Text>
      </Text>
      <RecipeMenu recipes={services.recipes} cursor={s.recipeCursor} active={s.pane === "recipes"} rows={recipeRows} width={width} engineLabel={services.engineLabel} />
      <Text> </Text>
      <RunsTable runs={runs} shown={shown} cursor={s.runCursor} active={s.pane === "runs"} filter={s.filter} filtering={s.filtering} rows={runRows} width={width} logRoot={services.logRoot} />
      {s.dialog ? <TypedConfirm title={`Delete run directory ${s.dialog.dir}?`} word={s.dialog.name} typed={s.dialog.typed} refusal={s.dialog.refusal} error={s.dialog.error} /> : null}
    </Box>
  );
}
