// Home screen state, pure: which pane has the cursor, both cursors, the runs filter and the
// delete dialog. The runs themselves are data the screen polls, passed in where needed.
import type { Key } from "ink";
import { editText, moveCursor } from "../../../core/textEdit.ts";
import type { HomePlace } from "../../../state/routes.ts";

export type HomePane = HomePlace["pane"];

export interface DeleteDialog {
  dir: string;
  name: string;
  typed: string;
  refusal?: string;
  error?: string;
}

/** Where the person is (kept in the home route, routes.ts) and what they are typing. */
export interface HomeState extends HomePlace {
  filtering: boolean;
  dialog?: DeleteDialog;
}

export type HomeAction =
  | { type: "move"; cmd: string; count: number; page: number }
  | { type: "nextPane" }
  | { type: "startFilter" }
  | { type: "type"; input: string; key: Key }
  | { type: "clearFilter" }
  | { type: "openDialog"; dialog: DeleteDialog }
  | { type: "closeDialog" }
  | { type: "dialogError"; error: string };

export function homePlace(s: HomeState): HomePlace {
  return { pane: s.pane, recipeCursor: s.recipeCursor, runCursor: s.runCursor, filter: s.filter };
}

export function initialHome(haveRuns: boolean): HomeState {
  return { pane: haveRuns ? "runs" : "recipes", recipeCursor: 0, runCursor: 0, filter: "", filtering: false };
}

export function homeReducer(s: HomeState, a: HomeAction): HomeState {
  switch (a.type) {
    case "move": {
      const cursor = s.pane === "recipes" ? s.recipeCursor : s.runCursor;
      const moved = moveCursor(a.cmd, cursor, a.count, a.page);
      if (moved === undefined) return s;
      return s.pane === "recipes" ? { ...s, recipeCursor: moved } : { ...s, runCursor: moved };
    }
    case "nextPane":
      return { ...s, pane: s.pane === "recipes" ? "runs" : "recipes" };
    case "startFilter":
      return { ...s, pane: "runs", filtering: true };
    case "clearFilter":
      return { ...s, filter: "" };
    case "openDialog":
      return { ...s, dialog: a.dialog };
    case "closeDialog":
      return { ...s, dialog: undefined };
    case "dialogError":
      return s.dialog ? { ...s, dialog: { ...s.dialog, error: a.error } } : s;
    case "type": {
      if (s.dialog) {
        if (a.key.escape) return { ...s, dialog: undefined };
        if (s.dialog.refusal) return s;
        return { ...s, dialog: { ...s.dialog, typed: editText(s.dialog.typed, a.input, a.key), error: undefined } };
      }
      if (a.key.escape) return { ...s, filter: "", filtering: false };
      if (a.key.return) return { ...s, filtering: false };
      return { ...s, filter: editText(s.filter, a.input, a.key), runCursor: 0 };
    }
  }
}

/** Whether Enter in the dialog deletes: the name typed in full and nothing refusing it. */
export function dialogConfirmed(d: DeleteDialog | undefined): d is DeleteDialog {
  return d !== undefined && !d.refusal && d.typed === d.name;
}
