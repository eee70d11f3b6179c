// The launch form's model, pure: rows from the recipe's schema fields, text values validated as
// typed with the same coercion as `key=value`, and the argument list a launch passes.
import type { z } from "zod";
import { type ConfigField, coerceFieldValue, listConfigFields, parseConfigArgs } from "../../../../config/index.ts";
import { EXISTING_DIR_CHOICES, type ExistingDirChoice, hasContent } from "../../../../runs/index.ts";

/** Fields the form manages itself rather than as schema rows. */
export const MANAGED_FIELDS = new Set(["log_path", "behavior_if_log_dir_exists"]);

export interface FormRow {
  kind: "logPath" | "ifExists" | "field" | "launch";
  field?: ConfigField;
}

export interface LaunchForm {
  recipe: string;
  schema: z.ZodObject;
  fields: ConfigField[];
  values: Record<string, string>;
  logPath: string;
  ifExists: ExistingDirChoice;
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
  return { recipe, schema, fields, values, logPath, ifExists: "new" };
}

/** Whether the log path already holds something (the form then asks what to do with it). */
export function logPathExists(path: string): boolean {
  return hasContent(path);
}

export function formRows(form: LaunchForm): FormRow[] {
  const rows: FormRow[] = [{ kind: "logPath" }];
  if (logPathExists(form.logPath)) rows.push({ kind: "ifExists" });
  for (const f of form.fields) rows.push({ kind: "field", field: f });
  rows.push({ kind: "launch" });
  return rows;
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
