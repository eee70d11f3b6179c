// Launch screen state, pure: the form once the recipe's schema has loaded, the cursor over its
// rows, the text being edited and the field filter being typed. Rows come from formRows (they
// depend on the log path, so actions that move the cursor over new rows say whether it exists).
import type { Key } from "ink";
import { editText, moveCursor } from "../../../core/textEdit.ts";
import { IF_EXISTS_CHOICES, type FormRow, type LaunchForm, cycleOption, firstFieldRow, formRows, nextGroupRow, toggleGroup } from "./launchForm.ts";

export interface LaunchState {
  form?: LaunchForm;
  loadError?: string;
  cursor: number;
  /** The row being edited and its text so far. */
  editing?: { row: FormRow; text: string };
  /** The field filter has the keyboard. */
  filtering: boolean;
}

export type LaunchAction =
  | { type: "loaded"; form: LaunchForm }
  | { type: "failed"; error: string }
  | { type: "move"; cmd: string; count: number; page: number }
  | { type: "activate"; row: FormRow }
  | { type: "type"; input: string; key: Key }
  | { type: "startFilter" }
  | { type: "filterKey"; input: string; key: Key; existing: boolean }
  | { type: "clearFilter" }
  | { type: "nextGroup"; existing: boolean };

export const initialLaunch: LaunchState = { cursor: 0, filtering: false };

/** Whether Esc clears the filter rather than leaving the screen. */
export function handlesBack(s: LaunchState): boolean {
  return (s.form?.filter ?? "") !== "";
}

function commit(form: LaunchForm, row: FormRow, text: string): LaunchForm {
  if (row.kind === "logPath") return { ...form, logPath: text };
  if (row.field) return { ...form, values: { ...form.values, [row.field.path]: text } };
  return form;
}

export function launchReducer(s: LaunchState, a: LaunchAction): LaunchState {
  switch (a.type) {
    case "loaded":
      return { ...s, form: a.form, loadError: undefined };
    case "failed":
      return { ...s, loadError: a.error };
    case "move": {
      const moved = moveCursor(a.cmd, s.cursor, a.count, a.page);
      return moved === undefined ? s : { ...s, cursor: moved };
    }
    case "activate": {
      const { form } = s;
      if (!form) return s;
      const row = a.row;
      if (row.kind === "group" && row.group) return { ...s, form: toggleGroup(form, row.group.group) };
      if (row.kind === "ifExists") {
        return { ...s, form: { ...form, ifExists: IF_EXISTS_CHOICES[(IF_EXISTS_CHOICES.indexOf(form.ifExists) + 1) % IF_EXISTS_CHOICES.length] } };
      }
      if (row.kind === "logPath") return { ...s, editing: { row, text: form.logPath } };
      if (!row.field) return s;
      const next = cycleOption(row.field, form.values[row.field.path]);
      if (next !== undefined) return { ...s, form: commit(form, row, next) };
      return { ...s, editing: { row, text: form.values[row.field.path] } };
    }
    case "type": {
      const { editing, form } = s;
      if (!editing || !form) return s;
      if (a.key.escape) return { ...s, editing: undefined };
      if (a.key.return) return { ...s, form: commit(form, editing.row, editing.text), editing: undefined };
      return { ...s, editing: { ...editing, text: editText(editing.text, a.input, a.key) } };
    }
    case "startFilter":
      return s.form ? { ...s, filtering: true } : s;
    case "filterKey": {
      const { form } = s;
      if (!form) return s;
      if (a.key.escape) return { ...s, filtering: false, form: { ...form, filter: "" }, cursor: 0 };
      if (a.key.return) return { ...s, filtering: false };
      const next = { ...form, filter: editText(form.filter, a.input, a.key) };
      return { ...s, form: next, cursor: firstFieldRow(formRows(next, a.existing)) };
    }
    case "clearFilter":
      return s.form ? { ...s, form: { ...s.form, filter: "" }, cursor: 0 } : s;
    case "nextGroup":
      return s.form ? { ...s, cursor: nextGroupRow(formRows(s.form, a.existing), s.cursor) } : s;
  }
}
