// One row of the launch form: a group header (folded or not), a schema field (value checked as
// typed), the log path, the choice for an existing log directory, or the launch button.
import type { ReactNode } from "react";
import { Text } from "ink";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { type FormRow, type LaunchForm, fieldError } from "./launchForm.ts";

export interface FormRowViewProps {
  form: LaunchForm;
  row: FormRow;
  selected: boolean;
  /** The text being typed into this row, when it is being edited. */
  editing?: string;
  problem?: string;
  widths: { label: number; value: number; desc: number };
}

export function FormRowView({ form, row, selected, editing, problem, widths }: FormRowViewProps): ReactNode {
  const mark = selected ? "›" : " ";
  if (row.kind === "launch") {
    return (
      <Text inverse={selected} color={problem ? theme.muted : theme.ok}>
        {`${mark} [ Launch ${form.recipe} in the background ]`}
      </Text>
    );
  }
  if (row.kind === "group" && row.group) {
    const g = row.group;
    const count = g.total === 0 ? "" : g.shown < g.total ? `${g.shown} of ${g.total} fields` : `${g.total} field${g.total === 1 ? "" : "s"}`;
    const changed = g.changed > 0 ? `, ${g.changed} changed` : "";
    const fold = g.collapsed ? "  (enter unfolds)" : "";
    return (
      <Text inverse={selected} bold color={theme.accent} wrap="truncate">
        {`${mark} ${g.collapsed ? "▸" : "▾"} ${g.title}`}
        <Text bold={false} color={theme.muted}>{`  ${count}${changed}${fold}`}</Text>
      </Text>
    );
  }
  if (row.kind === "ifExists") {
    return (
      <Text inverse={selected} wrap="truncate">
        {`${mark}   ${fit("if it exists", widths.label - 2)} `}
        <Text color={theme.warn}>{fit(form.ifExists, widths.value)}</Text>
        <Text color={theme.muted}>{fit(" log path holds a run: new name / resume it / delete it (enter cycles)", widths.desc)}</Text>
      </Text>
    );
  }
  const text = row.kind === "logPath" ? form.logPath : form.values[row.field!.path];
  const isEditing = editing !== undefined;
  const err = row.field ? fieldError(row.field, isEditing ? editing : text) : undefined;
  const label = row.kind === "logPath" ? "log path" : row.field!.path;
  const desc = row.kind === "logPath" ? "run directory (metrics, checkpoints, logs)" : `${row.field!.description ?? ""} (${row.field!.type})`;
  return (
    <Text inverse={selected && !isEditing} wrap="truncate">
      {`${mark}   ${fit(label, widths.label - 2)} `}
      <Text color={err ? theme.error : isEditing ? theme.accent : undefined}>{fit(isEditing ? `${editing}▏` : text, widths.value)}</Text>
      <Text color={theme.muted}>{` ${fit(desc, widths.desc)}`}</Text>
    </Text>
  );
}
