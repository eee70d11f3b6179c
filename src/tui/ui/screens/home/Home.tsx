// Home: the recipe menu (launch) and the runs of the log root (open, stop, resume, delete).
import { type ReactNode, useMemo, useReducer } from "react";
import { Box, Text } from "ink";
import { theme } from "../../../core/palette.ts";
import { useServices } from "../../../state/contexts.tsx";
import { TypedConfirm } from "../../components/TypedConfirm.tsx";
import { useRunsList } from "../../hooks/useRunsList.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { homeReducer, initialHome } from "./homeState.ts";
import { useHomeKeys } from "./useHomeKeys.ts";
import { RecipeMenu } from "./RecipeMenu.tsx";
import { RunsTable, filterRuns } from "./RunsTable.tsx";
import type { RouteOf } from "../../../state/routes.ts";

/** Where the person was when they left home (kept in the route, so coming back restores it). */
export type HomeRoute = RouteOf<"home">;

export function Home({ route, rows, width }: { route: HomeRoute; rows: number; width: number }): ReactNode {
  const services = useServices();
  const [runs, refresh] = useRunsList(services.logRoot);
  const [s, dispatch] = useReducer(homeReducer, runs.length > 0, (haveRuns) => ({ ...initialHome(haveRuns), ...(route.place ?? {}) }));
  const shown = useMemo(() => filterRuns(runs, s.filter), [runs, s.filter]);

  useScreenKeys(useHomeKeys({ state: s, dispatch, shown, refresh, rows }));

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
      <RecipeMenu
        recipes={services.recipes}
        cursor={s.recipeCursor}
        active={s.pane === "recipes"}
        rows={recipeRows}
        width={width}
        engineLabel={services.engineLabel}
      />
      <Text> </Text>
      <RunsTable
        runs={runs}
        shown={shown}
        cursor={s.runCursor}
        active={s.pane === "runs"}
        filter={s.filter}
        filtering={s.filtering}
        rows={runRows}
        width={width}
        logRoot={services.logRoot}
      />
      {s.dialog ? (
        <TypedConfirm
          title={`Delete run directory ${s.dialog.dir}?`}
          word={s.dialog.name}
          typed={s.dialog.typed}
          refusal={s.dialog.refusal}
          error={s.dialog.error}
        />
      ) : null}
    </Box>
  );
}
