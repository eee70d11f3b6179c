// The launch form's model, pure: rows from the recipe's schema fields under their groups (the
// groups `--help` shows; some start folded), narrowed by a name filter, text values validated as
// typed with the same coercion as `key=value`, and the argument list a launch passes.
import type { z } from "zod";
import {
  COLLAPSED_FIELD_GROUPS,
  type ConfigField,
  FIELD_GROUPS,
  FIELD_GROUP_TITLES,
  type FieldGroup,
  coerceFieldValue,
  groupConfigFields,
  listConfigFields,
  parseConfigArgs,
} from "../../../../config/index.ts";
import { EXISTING_DIR_CHOICES, type ExistingDirChoice, hasContent } from "../../../../runs/index.ts";

/** Fields the form manages itself rather than as schema rows. */
export const MANAGED_FIELDS = new Set(["log_path", "behavior_if_log_dir_exists"]);

export interface FormRow {
  kind: "logPath" | "ifExists" | "group" | "field" | "launch";
  field?: ConfigField;
  /** A group header: its group, title and how many of its fields are shown / changed. */
  group?: { group: FieldGroup; title: string; shown: number; total: number; changed: number; collapsed: boolean };
}

export interface LaunchForm {
  recipe: string;
  schema: z.ZodObject;
  fields: ConfigField[];
  values: Record<string, string>;
  logPath: string;
  ifExists: ExistingDirChoice;
  /** Groups shown as their header only. */
  collapsed: readonly FieldGroup[];
  /** Fields whose path holds every word of this (case-insensitive); empty shows all. */
  filter: string;
}

export function defaultText(field: ConfigField): string {
  if (!field.hasDefault) return "";
  if (field.default === undefined) return "";
  return typeof field.default === "string" ? field.default : JSON.stringify(field.default);
}

export function makeForm(recipe: string, schema: z.ZodObject, logPath: string, preset: readonly string[] = []): LaunchForm {
  const fields = listConfigFields(schema).filter((f) => !MANAGED_FIELDS.has(f.path));
  const values: Record<string, string> = {};
  for (const f of fields) values[f.path] = defaultText(f);
  for (const a of preset) {
    const eq = a.indexOf("=");
    if (eq > 0 && a.slice(0, eq) in values) values[a.slice(0, eq)] = a.slice(eq + 1);
  }
  return { recipe, schema, fields, values, logPath, ifExists: "new", collapsed: [...COLLAPSED_FIELD_GROUPS], filter: "" };
}

/** Whether a field's name matches the filter: every space-separated word is part of its path. */
export function matchesFilter(field: ConfigField, filter: string): boolean {
  const words = filter
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w.length > 0);
  const path = field.path.toLowerCase();
  return words.every((w) => path.includes(w));
}

export function toggleGroup(form: LaunchForm, group: FieldGroup): LaunchForm {
  const collapsed = form.collapsed.includes(group) ? form.collapsed.filter((g) => g !== group) : [...form.collapsed, group];
  return { ...form, collapsed };
}

/** Whether the log path already holds something (the form then asks what to do with it). */
export function logPathExists(path: string): boolean {
  return hasContent(path);
}

/**
 * The rows on screen, group by group in `--help`'s order. The log path and the if-exists choice
 * (the run group's fields the form manages itself) always show under the run group's header. A
 * filter opens every group with a match and hides the others; without one, folded groups show
 * their header only. `existing` says whether the log path holds a run (the caller looks, so this
 * stays pure).
 */
export function formRows(form: LaunchForm, existing: boolean): FormRow[] {
  const rows: FormRow[] = [];
  const filtering = form.filter.trim() !== "";
  const byGroup = new Map(groupConfigFields(form.fields).map((g) => [g.group, g.fields]));
  for (const group of FIELD_GROUPS) {
    const fields = byGroup.get(group) ?? [];
    const shown = filtering ? fields.filter((f) => matchesFilter(f, form.filter)) : fields;
    const managed: FormRow[] = group === "run" ? [{ kind: "logPath" }, ...(existing ? [{ kind: "ifExists" as const }] : [])] : [];
    if (shown.length === 0 && managed.length === 0) continue;
    const collapsed = !filtering && form.collapsed.includes(group);
    const changed = fields.filter((f) => form.values[f.path] !== defaultText(f)).length;
    rows.push({ kind: "group", group: { group, title: FIELD_GROUP_TITLES[group], shown: shown.length, total: fields.length, changed, collapsed } });
    rows.push(...managed);
    if (!collapsed) for (const f of shown) rows.push({ kind: "field", field: f });
  }
  rows.push({ kind: "launch" });
  return rows;
}

/** Where the cursor lands after the rows changed: the first field row, else the launch button. */
export function firstFieldRow(rows: readonly FormRow[]): number {
  const i = rows.findIndex((r) => r.kind === "field");
  return i >= 0 ? i : rows.length - 1;
}

/** The next group header after `cursor` (wrapping), for tab. */
export function nextGroupRow(rows: readonly FormRow[], cursor: number): number {
  for (let k = 1; k <= rows.length; k++) {
    const i = (cursor + k) % rows.length;
    if (rows[i]!.kind === "group") return i;
  }
  return cursor;
}

/** The error for one value as typed, or undefined when it is acceptable. */
export function fieldError(field: ConfigField, text: string): string | undefined {
  if (text === "" && (field.optional || field.nullable) && field.kind !== "string") return undefined;
  if (text === "" && field.required) return `${field.path} is required (${field.type})`;
  try {
    const value = coerceFieldValue(field, text);
    const check = field.schema.safeParse(value);
    if (!check.success && !(value === null && field.nullable) && !(value === undefined && field.optional)) {
      return `${field.path}: ${check.error.issues[0]?.message ?? "invalid"}`;
    }
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** `key=value` for every value that differs from its default. */
export function formArgs(form: LaunchForm): string[] {
  return form.fields.filter((f) => form.values[f.path] !== defaultText(f)).map((f) => `${f.path}=${form.values[f.path]}`);
}

/** Validates the whole config as the recipe will; returns the first problem. */
export function formProblem(form: LaunchForm): string | undefined {
  for (const f of form.fields) {
    const e = fieldError(f, form.values[f.path]);
    if (e) return e;
  }
  if (form.logPath.trim() === "") return "log path is empty";
  try {
    parseConfigArgs(form.schema, [...formArgs(form), `log_path=${form.logPath}`]);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export const IF_EXISTS_CHOICES: readonly ExistingDirChoice[] = EXISTING_DIR_CHOICES;

export function cycleOption(field: ConfigField, text: string): string | undefined {
  const options = field.kind === "boolean" ? ["true", "false"] : field.options?.map(String);
  if (!options || options.length === 0) return undefined;
  const i = options.indexOf(text);
  return options[(i + 1) % options.length];
}
