// Tool declarations in Harmony's TypeScript-like syntax, from JSON Schema parameters.
import { pythonJsonDumps } from "./pyjson.ts";
import type { ToolSpec } from "./types.ts";

type Schema = Record<string, unknown>;

function asSchema(v: unknown): Schema {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : {};
}

function jsonTypeToTypescript(schema: Schema): string {
  for (const key of ["oneOf", "anyOf"]) {
    const alts = schema[key];
    if (Array.isArray(alts)) return alts.map((s) => jsonTypeToTypescript(asSchema(s))).join(" | ");
  }
  const type = schema["type"] ?? "any";
  if (Array.isArray(type)) return type.map((t) => jsonTypeToTypescript({ type: t })).join(" | ");
  let base: string;
  if (type === "string") {
    const values = schema["enum"];
    if (Array.isArray(values)) return values.map((v) => pythonJsonDumps(v)).join(" | ");
    base = "string";
  } else if (type === "number" || type === "integer") base = "number";
  else if (type === "boolean") base = "boolean";
  else if (type === "array") base = `${jsonTypeToTypescript(asSchema(schema["items"]))}[]`;
  else if (type === "object") base = inlineObjectType(schema);
  else base = "any";
  return schema["nullable"] ? `${base} | null` : base;
}

function inlineObjectType(schema: Schema): string {
  if (schema["type"] !== "object") return "any";
  const props = asSchema(schema["properties"]);
  const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as unknown[]) : []);
  const fields = Object.entries(props).map(([name, s]) => `${name}${required.has(name) ? "" : "?"}: ${jsonTypeToTypescript(asSchema(s))}`);
  return "{ " + fields.join(", ") + " }";
}

function schemaComments(schema: Schema): string[] {
  const out: string[] = [];
  if (schema["title"]) out.push(String(schema["title"]), "");
  if (schema["description"]) out.push(String(schema["description"]));
  const examples = schema["examples"];
  if (Array.isArray(examples) && examples.length > 0) {
    out.push("Examples:");
    for (const e of examples) out.push(`- ${pythonJsonDumps(e)}`);
  }
  return out;
}

function parametersBlock(schema: Schema): string {
  const props = asSchema(schema["properties"]);
  if (schema["type"] !== "object" || Object.keys(props).length === 0) return "()";
  const lines: string[] = [];
  lines.push(schema["description"] ? `(_: // ${String(schema["description"])}` : "(_:");
  lines.push("{");
  const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as unknown[]) : []);
  for (const [name, raw] of Object.entries(props)) {
    const s = asSchema(raw);
    for (const c of schemaComments(s)) lines.push(`// ${c}`);
    const dflt = "default" in s ? ` // default: ${pythonJsonDumps(s["default"])}` : "";
    lines.push(`${name}${required.has(name) ? "" : "?"}: ${jsonTypeToTypescript(s)},${dflt}`);
  }
  lines.push("})");
  return lines.join("\n");
}

export function formatToolDefinition(tool: ToolSpec): string {
  const lines: string[] = [];
  if (tool.description) lines.push(`// ${tool.description}`);
  lines.push(`type ${tool.name} = ${parametersBlock(asSchema(tool.parameters))} => any;`);
  return lines.join("\n");
}
