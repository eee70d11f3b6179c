// key=value command-line arguments → a validated config object, with errors that name the key,
// the value given and what was expected.
import type { z } from "zod";
import { ConfigError } from "./errors.ts";
import { type ConfigField, isPlainObject, listConfigFields, listObjectPaths } from "./fields.ts";
import { closestMatches } from "./suggest.ts";

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);
const NULL_WORDS = new Set(["null", "none"]);

/** Splits `key=value` at the first `=`. */
export function splitAssignment(arg: string): { key: string; value: string } {
  const eq = arg.indexOf("=");
  if (eq <= 0) throw new ConfigError(`expected key=value, got "${arg}"`);
  return { key: arg.slice(0, eq), value: arg.slice(eq + 1) };
}

/**
 * Turns the raw text of one argument into the value the field's schema expects (number, boolean,
 * enum member, JSON list/object, ...). Throws ConfigError naming key, value and expected type.
 */
export function coerceFieldValue(field: Pick<ConfigField, "path" | "kind" | "type" | "schema" | "nullable" | "optional" | "options">, raw: string): unknown {
  const bad = (expected: string): ConfigError => new ConfigError(`invalid value for ${field.path}: "${raw}" (expected ${expected})`);
  const text = raw.trim();
  if ((field.nullable || field.optional) && NULL_WORDS.has(text.toLowerCase()) && field.kind !== "string") {
    return field.nullable ? null : undefined;
  }
  if (field.nullable && field.kind === "string" && text === "null") return null;
  switch (field.kind) {
    case "number":
    case "integer": {
      if (!NUMBER_RE.test(text) && !/^[+-]?inf(inity)?$/i.test(text)) throw bad(field.kind === "integer" ? "an integer" : "a number");
      const n = /inf/i.test(text) ? (text.startsWith("-") ? -Infinity : Infinity) : Number(text);
      if (field.kind === "integer" && !Number.isInteger(n)) throw bad("an integer");
      return n;
    }
    case "boolean": {
      const lower = text.toLowerCase();
      if (TRUE_WORDS.has(lower)) return true;
      if (FALSE_WORDS.has(lower)) return false;
      throw bad("true or false");
    }
    case "string":
      return raw;
    case "enum":
    case "literal": {
      const options = field.options ?? [];
      const match = options.find((o) => String(o) === raw);
      if (match === undefined) throw bad(`one of ${options.map((o) => String(o)).join(", ")}`);
      return match;
    }
    case "array":
    case "object":
    case "record": {
      const parsed = tryJson(text);
      const shapeOk = parsed.ok && (field.kind === "array" ? Array.isArray(parsed.value) : isPlainObject(parsed.value));
      if (!shapeOk) throw bad(field.kind === "array" ? `a JSON list like [1,2] of ${field.type}` : `a JSON object (${field.type})`);
      return parsed.value;
    }
    default: {
      // Unions and anything else: JSON when it parses, else the text itself (a bare string).
      const parsed = tryJson(text);
      return parsed.ok ? parsed.value : raw;
    }
  }
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1];
  if (value === undefined) delete node[last];
  else node[last] = value;
}

/**
 * Parses `key=value` arguments against an object schema and validates the result (defaults filled
 * in by zod). `base` gives starting values (e.g. a recipe's own overrides) that arguments replace.
 */
export function parseConfigArgs<S extends z.ZodObject>(schema: S, args: readonly string[], base: Record<string, unknown> = {}): z.output<S> {
  const fields = listConfigFields(schema);
  const byPath = new Map(fields.map((f) => [f.path, f]));
  const objectPaths = new Set(listObjectPaths(schema));
  const raw = structuredClone(base);
  const given = new Map<string, string>();
  for (const arg of args) {
    const { key, value } = splitAssignment(arg);
    const field = byPath.get(key);
    if (field) {
      setPath(raw, key, coerceFieldValue(field, value));
    } else if (objectPaths.has(key)) {
      const parsed = tryJson(value.trim());
      if (!parsed.ok || !isPlainObject(parsed.value)) {
        throw new ConfigError(`invalid value for ${key}: "${value}" (expected a JSON object)`);
      }
      setPath(raw, key, parsed.value);
    } else {
      const suggestions = closestMatches(key, [...byPath.keys()]);
      throw new ConfigError(`unknown config key "${key}"; closest valid keys: ${suggestions.join(", ")}`);
    }
    given.set(key, value);
  }
  return validateConfig(schema, raw, given, byPath);
}

/** Validates a plain object against the schema and reports the first problem by dotted key. */
export function validateConfig<S extends z.ZodObject>(
  schema: S,
  raw: unknown,
  given: ReadonlyMap<string, string> = new Map(),
  byPath: ReadonlyMap<string, ConfigField> = new Map(listConfigFields(schema).map((f) => [f.path, f])),
): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.map(String).join(".");
  const field = byPath.get(path) ?? findFieldForPath(byPath, path);
  const expected = field ? field.type : "a valid value";
  const valueText = given.get(path) ?? (field ? given.get(field.path) : undefined);
  if (valueText === undefined && issue.code === "invalid_type" && readPath(raw, issue.path) === undefined) {
    throw new ConfigError(`missing required config key ${path} (${expected})`);
  }
  const key = field?.path ?? path;
  const shown = valueText !== undefined ? `"${valueText}"` : JSON.stringify(readPath(raw, field ? key.split(".") : issue.path));
  const where = key !== path ? `; at ${path}` : "";
  throw new ConfigError(`invalid value for ${key || "config"}: ${shown} (expected ${expected}${where}: ${issue.message})`);
}

function findFieldForPath(byPath: ReadonlyMap<string, ConfigField>, path: string): ConfigField | undefined {
  // An issue inside a list or map value (e.g. `efforts.1`) belongs to the nearest listed field.
  let p = path;
  while (p.includes(".")) {
    p = p.slice(0, p.lastIndexOf("."));
    const f = byPath.get(p);
    if (f) return f;
  }
  return undefined;
}

function readPath(value: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = value;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** The value a field has in a parsed config (for showing current values in forms). */
export function getConfigValue(config: unknown, path: string): unknown {
  return readPath(config, path.split("."));
}
