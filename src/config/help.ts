// `cookbook run <recipe> --help`: the recipe's fields with types, defaults and descriptions, all
// read from its zod schema.
import type { z } from "zod";
import { type ConfigField, listConfigFields } from "./fields.ts";
import { FIELD_GROUPS, FIELD_GROUP_TITLES, type FieldGroup } from "./groups.ts";

/** Fields by group in the fixed group order (schema order within a group); empty groups left out. */
export function groupConfigFields(fields: readonly ConfigField[]): { group: FieldGroup; title: string; fields: ConfigField[] }[] {
  return FIELD_GROUPS.map((group) => ({ group, title: FIELD_GROUP_TITLES[group], fields: fields.filter((f) => f.group === group) })).filter(
    (g) => g.fields.length > 0,
  );
}

/** A default value as it would be typed on the command line. */
export function formatDefault(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function fieldLine(field: ConfigField): string {
  let tail = "";
  if (field.hasDefault) tail = ` = ${formatDefault(field.default)}`;
  else if (field.required) tail = " (required)";
  else if (field.optional) tail = " (optional)";
  return `${field.path}: ${field.type}${tail}`;
}

export function formatConfigHelp(recipe: { name: string; description: string; configSchema: z.ZodObject }): string {
  const lines = [
    `${recipe.name}: ${recipe.description}`,
    "",
    `Usage: cookbook run ${recipe.name} [key=value ...]`,
    "  Nested fields use dots (a.b=1); lists and objects are JSON (xs='[1,2]').",
  ];
  for (const { title, fields } of groupConfigFields(listConfigFields(recipe.configSchema))) {
    lines.push("", `${title[0]!.toUpperCase()}${title.slice(1)}:`);
    for (const field of fields) {
      lines.push(`  ${fieldLine(field)}`);
      if (field.description) lines.push(`      ${field.description}`);
    }
  }
  return lines.join("\n");
}
