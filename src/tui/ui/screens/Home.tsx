// Home: the recipe menu (launch) and the runs of the log root (open, stop, resume, delete).
import { type ReactNode, useEffect, useMemo, useState } from "react";
import { Box, Text } from "ink";
import { deleteRefusal, deleteRunDir } from "../../../runs/index.ts";
import { sparkline } from "../../core/chart.ts";
import { fit, fmtAge, fmtNum } from "../../core/format.ts";
import { statusColor, theme } from "../../core/palette.ts";
import { type RunRow, listRuns } from "../../services/runsPoller.ts";
import { resumeRun } from "../../services/runActions.ts";
import { useServices, useUIActions } from "../../state/contexts.tsx";
import { TypedConfirm } from "../components/TypedConfirm.tsx";
import { editText, moveCursor, windowStart } from "../hooks/textEdit.ts";
import { useScreenKeys } from "../hooks/useScreenKeys.ts";

const RUNS_REFRESH_MS = 2000;

type Pane = "recipes" | "runs";
interface DeleteDialog {
  dir: string;
  name: string;
  typed: string;
  refusal?: string;
  error?: string;
}

export function filterRuns(runs: readonly RunRow[], query: string): RunRow[] {
  const q = query.trim().toLowerCase();
  if (!q) return [...runs];
  return runs.filter((r) => [r.name, r.recipe ?? "", r.status, r.model ?? ""].some((s) => s.toLowerCase().includes(q)));
}

export function Home({ rows, width }: { rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const [runs, setRuns] = useState<RunRow[]>(() => listRuns(services.logRoot));
  const [pane, setPane] = useState<Pane>(() => (runs.length > 0 ? "runs" : "recipes"));
  const [recipeCursor, setRecipeCursor] = useState(0);
  const [runCursor, setRunCursor] = useState(0);
  const [filter, setFilter] = useState("");
  const [filtering, setFiltering] = useState(false);
  const [dialog, setDialog] = useState<DeleteDialog | undefined>();

  const refresh = (): void => setRuns(listRuns(services.logRoot));
  useEffect(() => {
    const t = setInterval(refresh, RUNS_REFRESH_MS);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [services.logRoot]);

  const shown = useMemo(() => filterRuns(runs, filter), [runs, filter]);
  const selectedRun = shown[Math.min(runCursor, shown.length - 1)];

  const runAction = (fn: (run: RunRow) => void): boolean => {
    if (!selectedRun) {
      actions.error("no run selected");
      return true;
    }
    try {
      fn(selectedRun);
    } catch (err) {
      actions.error((err as Error).message);
    }
    return true;
  };

  useScreenKeys({
    capturing: filtering || dialog !== undefined,
    onRaw: (input, key) => {
      if (dialog) {
        if (key.escape) setDialog(undefined);
        else if (key.return && !dialog.refusal && dialog.typed === dialog.name) {
          try {
            deleteRunDir(dialog.dir);
            actions.info(`deleted ${dialog.dir}`);
            setDialog(undefined);
            refresh();
          } catch (err) {
            setDialog({ ...dialog, error: (err as Error).message });
          }
        } else if (!dialog.refusal) setDialog({ ...dialog, typed: editText(dialog.typed, input, key), error: undefined });
        return;
      }
      if (key.escape) {
        setFilter("");
        setFiltering(false);
      } else if (key.return) setFiltering(false);
      else {
        setFilter(editText(filter, input, key));
        setRunCursor(0);
      }
    },
    onCommand: (cmd) => {
      const list = pane === "recipes" ? services.recipes.length : shown.length;
      const moved = moveCursor(cmd, pane === "recipes" ? recipeCursor : runCursor, list, Math.max(1, rows - 8));
      if (moved !== undefined) {
        (pane === "recipes" ? setRecipeCursor : setRunCursor)(moved);
        return true;
      }
      switch (cmd) {
        case "nextPane":
          setPane(pane === "recipes" ? "runs" : "recipes");
          return true;
        case "filter":
          setPane("runs");
          setFiltering(true);
          return true;
        case "refresh":
          refresh();
          return true;
        case "open":
          if (pane === "recipes") {
            const r = services.recipes[recipeCursor];
            if (r) actions.push({ name: "launch", recipe: r.name });
          } else if (selectedRun) actions.push({ name: "dashboard", runDir: selectedRun.dir });
          return true;
        case "stopRun":
          return runAction((r) => services.processes.stop(r.dir));
        case "resumeRun":
          return runAction((r) => {
            const res = resumeRun(services.processes, r.dir);
            actions.info(`resumed ${r.name} (pid ${res.pid})`);
          });
        case "deleteRun":
          return runAction((r) => setDialog({ dir: r.dir, name: r.name, typed: "", refusal: deleteRefusal(r.dir) }));
        case "back":
          if (filter) {
            setFilter("");
            return true;
          }
          return false;
        default:
          return false;
      }
    },
  });

  const recipeRows = Math.min(services.recipes.length, Math.max(2, Math.floor((rows - 6) / 3)));
  const runRows = Math.max(1, rows - recipeRows - 6 - (dialog ? 5 : 0));
  const rStart = windowStart(recipeCursor, services.recipes.length, recipeRows);
  const uStart = windowStart(runCursor, shown.length, runRows);
  const nameW = Math.min(24, Math.max(8, ...services.recipes.map((r) => r.name.length)));
  const engineW = Math.min(24, services.engineLabel.length);
  const descW = Math.max(10, width - nameW - engineW - 6);
  const cols = runColumns(width);

  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold color={theme.accent}>
          tinker-cookbook
        </Text>
        <Text color={theme.muted}>{`  log root ${services.logRoot}  ·  engine ${services.engineLabel}`}</Text>
      </Text>
      <Text bold color={pane === "recipes" ? theme.accent : undefined}>
        {`Recipes (${services.recipes.length})`}
      </Text>
      {services.recipes.slice(rStart, rStart + recipeRows).map((r, i) => {
        const sel = pane === "recipes" && rStart + i === recipeCursor;
        return (
          <Text key={r.name} wrap="truncate" inverse={sel}>
            {`${sel ? "›" : " "} ${fit(r.name, nameW)} ${fit(r.description, descW)} `}
            <Text color={theme.muted}>{fit(services.engineLabel, engineW)}</Text>
          </Text>
        );
      })}
      <Text> </Text>
      <Text bold color={pane === "runs" ? theme.accent : undefined} wrap="truncate">
        {`Runs (${shown.length}${filter ? ` of ${runs.length}, filter "${filter}"` : ""})${filtering ? "  / " + filter + "▏" : ""}`}
      </Text>
      <Text color={theme.muted} wrap="truncate">
        {cols.header}
      </Text>
      {shown.length === 0 ? (
        <Text color={theme.muted}>{runs.length === 0 ? `  no runs under ${services.logRoot} yet: launch a recipe above` : "  no run matches the filter"}</Text>
      ) : (
        shown.slice(uStart, uStart + runRows).map((r, i) => {
          const sel = pane === "runs" && uStart + i === runCursor;
          return (
            <Text key={r.dir} wrap="truncate" inverse={sel}>
              <Text color={statusColor(r.status)}>{fit(r.live ? "● live" : r.status, 10)}</Text>
              {cols.row(r)}
            </Text>
          );
        })
      )}
      {dialog ? <TypedConfirm title={`Delete run directory ${dialog.dir}?`} word={dialog.name} typed={dialog.typed} refusal={dialog.refusal} error={dialog.error} /> : null}
    </Box>
  );
}

/** Column layout of the runs table for a width (drops model and sparkline when narrow). */
function runColumns(width: number): { header: string; row: (r: RunRow) => string } {
  const wide = width >= 100;
  const nameW = Math.max(10, Math.min(24, Math.floor(width * 0.2)));
  const recipeW = wide ? 16 : 12;
  const modelW = wide ? 16 : 0;
  const stepW = wide ? 7 : 6;
  const ageW = 12;
  const metricW = wide ? 24 : Math.max(10, width - 10 - nameW - recipeW - stepW - ageW - 5);
  const used = 10 + nameW + recipeW + modelW + stepW + metricW + ageW + 6;
  const sparkW = wide ? Math.max(0, Math.min(30, width - used - 1)) : 0;
  const cell = (text: string, w: number): string => (w > 0 ? `${fit(text, w)} ` : "");
  const header = fit("status", 10) + cell("run", nameW) + cell("recipe", recipeW) + cell("model", modelW) + cell("step", stepW) + cell("key metric", metricW) + cell("trend", sparkW) + "age";
  const row = (r: RunRow): string => {
    const metric = r.keyMetric ? `${r.keyMetric}=${fmtNum(r.metrics[r.keyMetric] as number)}` : "";
    return (
      cell(r.name, nameW) +
      cell(r.recipe ?? "–", recipeW) +
      cell(r.model ?? "–", modelW) +
      cell(r.lastStep === undefined ? "–" : String(r.lastStep), stepW) +
      cell(metric, metricW) +
      cell(sparkline(r.spark, sparkW), sparkW) +
      fmtAge(r.updatedAt)
    );
  };
  return { header, row };
}
