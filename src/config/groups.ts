// Field groups: where a config field is shown in `--help` and in the TUI's launch form. The group
// is a tag in the field's zod metadata, set where the field is declared (a shared field group is
// tagged once with `inGroup`), so every recipe built from those declarations shows the same
// sections. Fields nobody tagged (a recipe's own dataset or environment settings) land in `data`.
import type { z } from "zod";

export const FIELD_GROUPS = ["run", "optimizer", "data", "evaluation", "checkpoints", "tracking", "advanced"] as const;
export type FieldGroup = (typeof FIELD_GROUPS)[number];

export const FIELD_GROUP_TITLES: Record<FieldGroup, string> = {
  run: "run and model",
  optimizer: "optimizer and schedule",
  data: "data",
  evaluation: "evaluation",
  checkpoints: "checkpoints",
  tracking: "tracking",
  advanced: "advanced",
};

/** Where untagged fields go: a recipe's own fields are mostly its data or environment. */
export const DEFAULT_FIELD_GROUP: FieldGroup = "data";

/** Groups a form shows folded until asked. */
export const COLLAPSED_FIELD_GROUPS: ReadonlySet<FieldGroup> = new Set(["advanced"]);

function isFieldGroup(value: unknown): value is FieldGroup {
  return typeof value === "string" && (FIELD_GROUPS as readonly string[]).includes(value);
}

/** One field tagged with a group (its description and other metadata kept). */
export function tagGroup<T extends z.ZodType>(group: FieldGroup, schema: T): T {
  return schema.meta({ ...(schema.meta() ?? {}), group }) as T;
}

/** Every field of a shape tagged with a group; spread the result into a schema as before. */
export function inGroup<S extends Record<string, z.ZodType>>(group: FieldGroup, shape: S): S {
  const out: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(shape)) out[key] = tagGroup(group, schema);
  return out as S;
}

/** The group a schema (or any of its wrappers) is tagged with, or undefined. */
export function groupTag(schema: z.ZodType): FieldGroup | undefined {
  const tag = (schema.meta() as { group?: unknown } | undefined)?.group;
  return isFieldGroup(tag) ? tag : undefined;
}
