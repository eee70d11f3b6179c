// JSON text the way Python's json.dumps writes it (", " and ": " separators, non-ASCII escaped as
// \uXXXX). Chat templates and the Python cookbook produce this spelling, and token-exact rendering
// of tool calls and tool declarations depends on it.

export interface PyJsonOptions {
  /** [itemSeparator, keySeparator]; Python's default is [", ", ": "]. */
  separators?: [string, string];
  sortKeys?: boolean;
  ensureAscii?: boolean;
}

function pyString(s: string, ensureAscii: boolean): string {
  const json = JSON.stringify(s);
  if (!ensureAscii) return json;
  return json.replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function pyNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
  return JSON.stringify(n);
}

export function pythonJsonDumps(value: unknown, options: PyJsonOptions = {}): string {
  const [itemSep, keySep] = options.separators ?? [", ", ": "];
  const ensureAscii = options.ensureAscii ?? true;
  const sortKeys = options.sortKeys ?? false;
  const walk = (v: unknown): string => {
    if (v === null || v === undefined) return "null";
    if (typeof v === "string") return pyString(v, ensureAscii);
    if (typeof v === "number") return pyNumber(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (Array.isArray(v)) return "[" + v.map(walk).join(itemSep) + "]";
    if (typeof v === "object") {
      let keys = Object.keys(v as object);
      if (sortKeys) keys = [...keys].sort();
      const obj = v as Record<string, unknown>;
      return "{" + keys.map((k) => pyString(k, ensureAscii) + keySep + walk(obj[k])).join(itemSep) + "}";
    }
    return pyString(String(v), ensureAscii);
  };
  return walk(value);
}
