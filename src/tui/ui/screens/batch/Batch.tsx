// Batch: the batches under the experiments roots (./experiments and $COOKBOOK_EXPERIMENTS_ROOT)
// and, for one batch, each run's state with its key metric and trend, the selected run's error,
// and the comparison table once comparison.json exists. enter opens a run's dashboard, o overlays
// all runs of the batch there, n launches an experiment file (`cookbook batch <file>`) and follows
// its batch.json as soon as it appears.
import { type ReactNode, useEffect, useReducer } from "react";
import { basename } from "node:path";
import { Box, Text } from "ink";
import { batchForFile, listExperimentFiles, readLaunchLog } from "../../../../experiments/batches.ts";
import { isPidAlive } from "../../../../runs/index.ts";
import { theme } from "../../../core/palette.ts";
import { useServices } from "../../../state/contexts.tsx";
import { useLoaded } from "../../hooks/useLoaded.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { BatchHeader, BatchList, ComparisonTable, LaunchBox, RunDetail, RunsTable, shortPath } from "./BatchParts.tsx";
import { type PendingLaunch, batchScreenReducer, initialBatchScreen } from "./batchState.ts";
import { useBatchKeys } from "./useBatchKeys.ts";
import { useBatches, useBatchView } from "./useBatchData.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type BatchRoute = RouteOf<"batch">;

function PendingLine({ pending, width }: { pending: PendingLaunch; width: number }): ReactNode {
  const alive = isPidAlive(pending.pid);
  // Its output is read once the launch has ended (the pending line re-renders with every batches poll).
  const tail = useLoaded(() => (alive ? [] : readLaunchLog(pending.logFile, 3)), [alive, pending.logFile], []).value;
  const name = basename(pending.file);
  if (alive) {
    return (
      <Text color={theme.warn} wrap="truncate">
        {`launched cookbook batch ${name} (pid ${pending.pid}): waiting for its batch.json…  output in ${shortPath(pending.logFile)}`.slice(0, width)}
      </Text>
    );
  }
  return (
    <>
      <Text color={theme.error} wrap="truncate">
        {`cookbook batch ${name} (pid ${pending.pid}) ended before writing batch.json; ${shortPath(pending.logFile)} ends with:`.slice(0, width)}
      </Text>
      {tail.map((l, i) => (
        <Text key={i} color={theme.error} wrap="truncate">
          {`  ${l}`.slice(0, width)}
        </Text>
      ))}
    </>
  );
}

export function Batch({ route, rows, width }: { route: BatchRoute; rows: number; width: number }): ReactNode {
  const services = useServices();
  const batches = useBatches(services.experimentRoots, services.pollMs);
  const [s, dispatch] = useReducer(batchScreenReducer, route.place, initialBatchScreen);
  const view = useBatchView(s.open, services.pollMs);
  // Listed when the dialog opens (and again when it reopens), not on every frame.
  const dialogOpen = s.launch !== undefined;
  const listed = useLoaded(() => (dialogOpen ? listExperimentFiles(services.experimentRoots) : []), [dialogOpen, services.experimentRoots], []);
  const files = listed.value;

  useEffect(() => {
    if (s.pending === undefined) return;
    // A second of slack for file-time granularity: the batch.json is written after the launch.
    const found = batchForFile(batches, s.pending.file, s.pending.at - 1000);
    if (found !== undefined) dispatch({ type: "found", dir: found.dir });
  }, [batches, s.pending]);

  useScreenKeys(useBatchKeys({ state: s, dispatch, batches, view, files, rows }));

  const dialogRows = s.launch !== undefined ? Math.min(10, Math.max(4, Math.floor(rows / 3))) : 0;
  const pendingRows = s.pending !== undefined ? 4 : 0;
  const bodyRows = Math.max(3, rows - dialogRows - pendingRows);
  const pending = s.pending !== undefined ? <PendingLine pending={s.pending} width={width} /> : null;
  const dialog = s.launch !== undefined ? <LaunchBox dialog={s.launch} files={files} listing={!listed.current} rows={dialogRows} width={width} /> : null;

  if (s.open === undefined || view === undefined) {
    const roots = services.experimentRoots.map(shortPath).join(", ");
    return (
      <Box flexDirection="column">
        <Text bold color={theme.accent} wrap="truncate">
          {`Batches  ${batches.length} under ${roots}`}
        </Text>
        {batches.length === 0 ? (
          <Text
            color={theme.muted}
            wrap="truncate"
          >{`  no batches yet: n launches an experiment file (cookbook batch <file>); batches appear here from their batch.json`}</Text>
        ) : (
          <BatchList batches={batches} cursor={s.batchCursor} rows={Math.max(1, bodyRows - 2)} width={width} />
        )}
        {pending}
        {dialog}
      </Box>
    );
  }

  const comparisonRows = view.comparison !== undefined ? Math.min(view.comparison.models.length + 2, Math.floor(bodyRows / 2)) : 1;
  const hasError = view.error !== undefined || view.state?.error !== undefined;
  const runRows = Math.max(1, bodyRows - comparisonRows - 5 - (hasError ? 1 : 0));
  const phase = view.state?.phase;
  return (
    <Box flexDirection="column">
      <BatchHeader view={view} width={width} />
      <RunsTable view={view} cursor={s.runCursor} rows={runRows} width={width} />
      <RunDetail view={view} cursor={s.runCursor} width={width} />
      {view.comparison !== undefined ? (
        <ComparisonTable comparison={view.comparison} rows={comparisonRows} width={width} />
      ) : (
        <Text color={view.comparisonError !== undefined ? theme.error : theme.muted} wrap="truncate">
          {view.comparisonError ??
            (phase === "evaluating"
              ? "evaluating every run and baseline on the test sets: the comparison appears when it ends"
              : "no comparison yet (written after training and evaluation)")}
        </Text>
      )}
      {pending}
      {dialog}
    </Box>
  );
}
