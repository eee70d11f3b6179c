// Walks a recipe's zod config schema into a flat list of fields (dotted paths for nested objects).
// The same walk drives key=value parsing, `--help` text and the TUI's launch forms, so the schema
// stays the single source of names, types, defaults and descriptions.
import { z } from "zod";
import { DEFAULT_FIELD_GROUP, type FieldGroup, groupTag } from "./groups.ts";

export type FieldKind = "number" | "integer" | "string" | "boolean" | "enum" | "literal" | "array" | "object" | "record" | "union" | "unknown";

export interface ConfigField {
  /** Dotted path from the root, e.g. `stream_minibatch.num_minibatches`. */
  path: string;
  kind: FieldKind;
  /** Human-readable type, e.g. `integer`, `list[number]`, `linear | cosine | constant`. */
  type: string;
  description?: string;
  hasDefault: boolean;
  /** The default value (from the field's own `.default()` or an enclosing object's default). */
  default?: unknown;
  /** True when the field has no default and cannot be omitted. */
  required: boolean;
  optional: boolean;
  nullable: boolean;
  /** The section of `--help` and the launch form this field belongs to. */
  group: FieldGroup;
  /** Allowed values for enum and literal fields. */
  options?: readonly (string | number | boolean)[];
  /** The field's schema with default/optional/nullable wrappers removed. */
  schema: z.ZodType;
}

/** A schema with its wrappers peeled off and what they said. */
export interface Unwrapped {
  inner: z.ZodType;
  description?: string;
  hasDefault: boolean;
  default?: unknown;
  optional: boolean;
  nullable: boolean;
  /** The group tag found on the schema or one of its wrappers. */
  group?: FieldGroup;
}

export function unwrapSchema(schema: z.ZodType): Unwrapped {
  const out: Unwrapped = { inner: schema, hasDefault: false, optional: false, nullable: false };
  let current: z.ZodType = schema;
  for (;;) {
    out.description ??= current.description;
    out.group ??= groupTag(current);
    if (current instanceof z.ZodDefault || current instanceof z.ZodPrefault) {
      if (!out.hasDefault) {
        out.hasDefault = true;
        out.default = current.def.defaultValue;
      }
      current = current.def.innerType as z.ZodType;
    } else if (current instanceof z.ZodOptional) {
      out.optional = true;
      current = current.def.innerType as z.ZodType;
    } else if (current instanceof z.ZodNullable) {
      out.nullable = true;
      current = current.def.innerType as z.ZodType;
    } else if (current instanceof z.ZodReadonly || current instanceof z.ZodCatch) {
      current = current.def.innerType as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      current = current.def.in as z.ZodType;
    } else {
      break;
    }
  }
  out.inner = current;
  return out;
}

export function kindOf(schema: z.ZodType): FieldKind {
  if (schema instanceof z.ZodNumber) return schema.format?.includes("int") || schema.isInt ? "integer" : "number";
  if (schema instanceof z.ZodString) return "string";
  if (schema instanceof z.ZodBoolean) return "boolean";
  if (schema instanceof z.ZodEnum) return "enum";
  if (schema instanceof z.ZodLiteral) return "literal";
  if (schema instanceof z.ZodArray || schema instanceof z.ZodTuple) return "array";
  if (schema instanceof z.ZodObject) return "object";
  if (schema instanceof z.ZodRecord) return "record";
  if (schema instanceof z.ZodUnion) return "union";
  return "unknown";
}

export function enumOptions(schema: z.ZodType): (string | number | boolean)[] | undefined {
  if (schema instanceof z.ZodEnum) return schema.options.map((o) => o as string | number);
  if (schema instanceof z.ZodLiteral) {
    return [...schema.values].filter((v): v is string | number | boolean => ["string", "number", "boolean"].includes(typeof v));
  }
  return undefined;
}

/** A short type name for help text and error messages. */
export function describeType(schema: z.ZodType): string {
  const { inner, nullable } = unwrapSchema(schema);
  const base = describeInner(inner);
  return nullable ? `${base} | null` : base;
}

function describeInner(schema: z.ZodType): string {
  const kind = kindOf(schema);
  switch (kind) {
    case "enum":
    case "literal":
      return (enumOptions(schema) ?? []).map((o) => String(o)).join(" | ");
    case "array":
      return schema instanceof z.ZodArray ? `list[${describeType(schema.element as z.ZodType)}]` : "list";
    case "record":
      return schema instanceof z.ZodRecord ? `map[string, ${describeType(schema.valueType as z.ZodType)}]` : "map";
    case "union":
      return schema instanceof z.ZodUnion ? schema.options.map((o) => describeType(o as z.ZodType)).join(" | ") : "union";
    default:
      return kind;
  }
}

/** Every leaf field of an object schema, nested objects flattened with dotted paths, in schema order. */
export function listConfigFields(schema: z.ZodObject): ConfigField[] {
  const out: ConfigField[] = [];
  walk(schema, "", undefined, DEFAULT_FIELD_GROUP, out);
  return out;
}

function walk(schema: z.ZodObject, prefix: string, parentDefault: unknown, parentGroup: FieldGroup, out: ConfigField[]): void {
  for (const [key, child] of Object.entries(schema.shape)) {
    const fieldSchema = child as z.ZodType;
    const path = prefix ? `${prefix}.${key}` : key;
    const u = unwrapSchema(fieldSchema);
    const inherited = isPlainObject(parentDefault) && key in parentDefault ? { value: parentDefault[key] } : undefined;
    const hasDefault = u.hasDefault || inherited !== undefined;
    const defaultValue = u.hasDefault ? u.default : inherited?.value;
    const group = u.group ?? parentGroup;
    if (u.inner instanceof z.ZodObject) {
      walk(u.inner, path, defaultValue, group, out);
      continue;
    }
    const field: ConfigField = {
      path,
      kind: kindOf(u.inner),
      type: describeType(fieldSchema),
      hasDefault,
      required: !hasDefault && !u.optional,
      optional: u.optional,
      nullable: u.nullable,
      group,
      schema: u.inner,
    };
    if (u.description !== undefined) field.description = u.description;
    if (hasDefault) field.default = defaultValue;
    const options = enumOptions(u.inner);
    if (options) field.options = options;
    out.push(field);
  }
}

/** Paths of nested object fields (which accept a JSON object as a whole), e.g. `stream_minibatch`. */
export function listObjectPaths(schema: z.ZodObject, prefix = ""): string[] {
  const out: string[] = [];
  for (const [key, child] of Object.entries(schema.shape)) {
    const { inner } = unwrapSchema(child as z.ZodType);
    if (inner instanceof z.ZodObject) {
      const path = prefix ? `${prefix}.${key}` : key;
      out.push(path, ...listObjectPaths(inner, path));
    }
  }
  return out;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
