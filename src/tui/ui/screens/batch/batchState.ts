// Batch screen state, pure: the batches list or one open batch, their cursors, the launch dialog
// (a path typed or picked from the experiment files found) and a launched batch being waited for
// until its batch.json appears. The component feeds it list lengths; nothing here reads files.
import type { Key } from "ink";
import { editText, moveCursor } from "../../../core/textEdit.ts";
import type { BatchPlace } from "../../../state/routes.ts";

export interface LaunchDialog {
  /** Typed text: filters the experiment files, or is the path to launch when none matches. */
  text: string;
  cursor: number;
  error?: string;
}

/** A batch started from the screen: followed until a batch.json naming its file appears. */
export interface PendingLaunch {
  file: string;
  pid: number;
  logFile: string;
  at: number;
}

/** Where the person is (kept in the batch route, routes.ts) and the launch dialog. */
export interface BatchScreenState extends BatchPlace {
  launch?: LaunchDialog;
  pending?: PendingLaunch;
}

export type BatchScreenAction =
  | { type: "move"; cmd: string; count: number; page: number }
  | { type: "openBatch"; dir: string }
  | { type: "back" }
  | { type: "openLaunch" }
  | { type: "launchKey"; input: string; key: Key; count: number }
  | { type: "closeLaunch" }
  | { type: "launchError"; error: string }
  | { type: "launched"; pending: PendingLaunch }
  /** The launched batch's batch.json appeared: open it. */
  | { type: "found"; dir: string };

export function initialBatchScreen(place: Partial<BatchPlace> = {}): BatchScreenState {
  return { batchCursor: 0, runCursor: 0, ...place };
}

export function batchPlace(s: BatchScreenState): BatchPlace {
  return { open: s.open, batchCursor: s.batchCursor, runCursor: s.runCursor };
}

/** Whether esc is the screen's (closing the dialog, leaving a batch) rather than the app's. */
export function handlesBack(s: BatchScreenState): boolean {
  return s.launch !== undefined || s.open !== undefined;
}

/** Experiment files matching the dialog's text (every file while it is empty). */
export function filterFiles(files: readonly string[], text: string): string[] {
  const q = text.trim().toLowerCase();
  return q === "" ? [...files] : files.filter((f) => f.toLowerCase().includes(q));
}

/** The file Enter launches: the picked match, else the typed path; undefined when there is neither. */
export function launchTarget(dialog: LaunchDialog, files: readonly string[]): string | undefined {
  const matches = filterFiles(files, dialog.text);
  if (matches.length > 0) return matches[Math.min(dialog.cursor, matches.length - 1)];
  return dialog.text.trim() === "" ? undefined : dialog.text.trim();
}

export function batchScreenReducer(s: BatchScreenState, a: BatchScreenAction): BatchScreenState {
  switch (a.type) {
    case "move": {
      const cursor = s.open === undefined ? s.batchCursor : s.runCursor;
      const moved = moveCursor(a.cmd, Math.min(cursor, Math.max(0, a.count - 1)), a.count, a.page);
      if (moved === undefined) return s;
      return s.open === undefined ? { ...s, batchCursor: moved } : { ...s, runCursor: moved };
    }
    case "openBatch":
      return { ...s, open: a.dir, runCursor: 0 };
    case "back":
      if (s.launch !== undefined) return { ...s, launch: undefined };
      if (s.open !== undefined) return { ...s, open: undefined };
      return s;
    case "openLaunch":
      return { ...s, launch: { text: "", cursor: 0 } };
    case "closeLaunch":
      return { ...s, launch: undefined };
    case "launchError":
      return s.launch ? { ...s, launch: { ...s.launch, error: a.error } } : s;
    case "launchKey": {
      const d = s.launch;
      if (d === undefined) return s;
      if (a.key.escape) return { ...s, launch: undefined };
      if (a.key.upArrow) return { ...s, launch: { ...d, cursor: Math.max(0, d.cursor - 1) } };
      if (a.key.downArrow) return { ...s, launch: { ...d, cursor: Math.min(Math.max(0, a.count - 1), d.cursor + 1) } };
      const text = editText(d.text, a.input, a.key);
      return text === d.text ? s : { ...s, launch: { text, cursor: 0 } };
    }
    case "launched":
      return { ...s, launch: undefined, pending: a.pending };
    case "found":
      return { ...s, pending: undefined, open: a.dir, runCursor: 0 };
  }
}
