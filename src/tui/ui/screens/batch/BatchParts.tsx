// The Batch screen's pieces: the batches table, one batch's runs, the comparison grid and the
// launch dialog. Each fits the width it is given and the rows it is told.
import type { ReactNode } from "react";
import { relative } from "node:path";
import { Box, Text } from "ink";
import type { BatchListing, BatchView } from "../../../../experiments/batches.ts";
import type { Comparison } from "../../../../experiments/state.ts";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import { type LaunchDialog, filterFiles } from "./batchState.ts";
import { batchListLines, batchPhaseColor, comparisonGrid, countsLabel, gridWidths, phaseLabel, runLines, runStatusColor } from "./batchView.ts";

/** A path as the person typed it would be: relative to the working directory when inside it. */
export function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel !== "" && !rel.startsWith("..") ? rel : path;
}

export function BatchList({ batches, cursor, rows, width }: { batches: readonly BatchListing[]; cursor: number; rows: number; width: number }): ReactNode {
  const table = batchListLines(batches, width);
  const at = Math.min(cursor, batches.length - 1);
  const start = windowStart(at, batches.length, rows);
  return (
    <>
      <Text color={theme.muted} wrap="truncate">
        {table.header}
      </Text>
      {batches.slice(start, start + rows).map((b, i) => (
        <Text key={b.dir} wrap="truncate" inverse={start + i === at} color={batchPhaseColor(b)}>
          {table.row(start + i)}
        </Text>
      ))}
    </>
  );
}

export function BatchHeader({ view, width }: { view: BatchView; width: number }): ReactNode {
  const state = view.state;
  const counts = { queued: 0, running: 0, done: 0, failed: 0, stopped: 0 };
  for (const r of view.runs) counts[r.status] += 1;
  const listing = { live: view.live, state, error: view.error };
  return (
    <>
      <Text wrap="truncate">
        <Text bold color={theme.accent}>
          {`Batch ${state?.experiment ?? shortPath(view.dir)}  `}
        </Text>
        <Text color={batchPhaseColor(listing)}>{`${view.live ? "● " : ""}${phaseLabel(listing)}`}</Text>
        <Text color={theme.muted}>
          {fit(
            `  ${state?.pid !== undefined ? `pid ${state.pid}  ` : ""}${countsLabel(counts)}  file ${state === undefined ? "–" : shortPath(state.file)}`,
            Math.max(0, width - 30),
          )}
        </Text>
      </Text>
      {view.error !== undefined || state?.error !== undefined ? (
        <Text color={theme.error} wrap="truncate">
          {view.error ?? state?.error}
        </Text>
      ) : null}
    </>
  );
}

export function RunsTable({ view, cursor, rows, width }: { view: BatchView; cursor: number; rows: number; width: number }): ReactNode {
  const runs = view.runs;
  const table = runLines(runs, width);
  const at = Math.min(cursor, runs.length - 1);
  const start = windowStart(at, runs.length, rows);
  return (
    <>
      <Text color={theme.muted} wrap="truncate">
        {table.header}
      </Text>
      {runs.length === 0 ? <Text color={theme.muted}>{"  this batch has no runs"}</Text> : null}
      {runs.slice(start, start + rows).map((r, i) => (
        <Text key={r.name} wrap="truncate" inverse={start + i === at} color={runStatusColor(r.status)}>
          {table.row(start + i)}
        </Text>
      ))}
    </>
  );
}

/** Below the runs: where the selected run lives, and its error in full when it failed. */
export function RunDetail({ view, cursor, width }: { view: BatchView; cursor: number; width: number }): ReactNode {
  const run = view.runs[Math.min(cursor, view.runs.length - 1)];
  if (run === undefined) return null;
  const overrides = Object.entries(run.overrides)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return (
    <>
      <Text color={theme.muted} wrap="truncate">
        {fit(`${run.name}: ${run.recipe} ${overrides}  →  ${shortPath(run.dir)}`, width)}
      </Text>
      {run.error !== undefined ? (
        <Text color={theme.error} wrap="truncate">
          {fit(`error: ${run.error.replace(/\s+/g, " ")}`, width)}
        </Text>
      ) : null}
    </>
  );
}

export function ComparisonTable({ comparison, rows, width }: { comparison: Comparison; rows: number; width: number }): ReactNode {
  const grid = comparisonGrid(comparison);
  const w = gridWidths(grid, width);
  const shown = grid.rows.slice(0, Math.max(1, rows - 2));
  return (
    <>
      <Text bold color={theme.accent} wrap="truncate">
        {fit(`Comparison  ${grid.rows.length} models × ${grid.columns.length} test sets  (* best of each test set)`, width)}
      </Text>
      <Text color={theme.muted} wrap="truncate">
        {`${fit("model", w.model - 1)} ${fit("kind", w.kind)}${grid.columns.map((c) => ` ${fit(c, w.cell)}`).join("")}`.slice(0, width)}
      </Text>
      {shown.map((r) => (
        <Text key={r.model} wrap="truncate">
          {`${fit(r.model, w.model - 1)} `}
          <Text color={theme.muted}>{fit(r.kind, w.kind)}</Text>
          {r.cells.map((c, i) => (
            <Text key={i} bold={c.best} color={c.best ? theme.ok : c.error !== undefined ? theme.error : undefined}>
              {` ${fit(c.text, w.cell)}`}
            </Text>
          ))}
        </Text>
      ))}
      {shown.length < grid.rows.length ? (
        <Text color={theme.muted}>{`  … ${grid.rows.length - shown.length} more models (comparison.md has them all)`}</Text>
      ) : null}
    </>
  );
}

export function LaunchBox({
  dialog,
  files,
  listing,
  rows,
  width,
}: {
  dialog: LaunchDialog;
  files: readonly string[];
  /** The experiment files are still being listed: not "none" yet. */
  listing: boolean;
  rows: number;
  width: number;
}): ReactNode {
  const matches = filterFiles(files, dialog.text);
  const at = Math.min(dialog.cursor, matches.length - 1);
  const listRows = Math.max(1, rows - 3);
  const start = windowStart(Math.max(0, at), matches.length, listRows);
  return (
    <Box flexDirection="column" borderStyle="single" borderTop borderBottom={false} borderLeft={false} borderRight={false} width={width}>
      <Text color={theme.accent} wrap="truncate">
        {`Launch cookbook batch <file>: ${dialog.text}▏`}
      </Text>
      {matches.length === 0 ? (
        <Text color={theme.muted} wrap="truncate">
          {dialog.text.trim() === ""
            ? listing
              ? "  listing the experiment files…"
              : "  no experiment files (*.ts, *.json, *.yaml) in the experiments roots: type a path"
            : `  enter launches ${dialog.text.trim()}`}
        </Text>
      ) : (
        matches.slice(start, start + listRows).map((f, i) => (
          <Text key={f} wrap="truncate" inverse={start + i === at}>
            {`${start + i === at ? "›" : " "} ${shortPath(f)}`}
          </Text>
        ))
      )}
      <Text color={dialog.error !== undefined ? theme.error : theme.muted} wrap="truncate">
        {dialog.error ?? "type to filter or a path · ↑↓ pick · enter launches · esc cancels"}
      </Text>
    </Box>
  );
}
