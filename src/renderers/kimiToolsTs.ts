// Kimi K2.5+ declares tools TypeScript-style (docs/cookbook-parity.md#family-formats): a
// "namespace functions { type NAME = (_: {…}) => any; }" block built from each tool's JSON
// Schema, with descriptions and constraints as // comments, required fields first.
import { pythonJsonDumps } from "./pyjson.ts";
import { RendererError, type ToolSpec } from "./types.ts";

const INDENT = "  ";
type Schema = Record<string, unknown>;

function comment(text: string, indent = ""): string {
  return text
    .split("\n")
    .map((line) => (line ? `${indent}// ${line}` : ""))
    .join("\n");
}

/** Python's str()/repr() of a JSON scalar, as the reference encoder prints constraints and enum values. */
function pyScalar(v: unknown): string {
  if (v === true) return "True";
  if (v === false) return "False";
  if (v === null || v === undefined) return "None";
  return typeof v === "string" ? v : String(v);
}

class Defs {
  readonly definitions = new Map<string, Schema>();
  selfRef = false;

  resolve(ref: string): string {
    if (ref === "#") {
      this.selfRef = true;
      return "parameters";
    }
    if (!ref.startsWith("#/$defs/")) throw new RendererError(`tool schema: unsupported $ref ${JSON.stringify(ref)} (expected "#" or "#/$defs/NAME")`);
    const name = ref.slice("#/$defs/".length);
    if (!this.definitions.has(name)) throw new RendererError(`tool schema: $ref ${JSON.stringify(ref)} has no definition in $defs`);
    return name;
  }
}

interface TsType {
  description: string;
  constraints: [string, unknown][];
  ts(indent: string): string;
}

function baseOf(schema: Schema, constraintKeys: readonly string[] = []): Pick<TsType, "description" | "constraints"> {
  const description = typeof schema["description"] === "string" ? schema["description"] : "";
  const constraints = constraintKeys.filter((k) => k in schema).map((k): [string, unknown] => [k, schema[k]]);
  constraints.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { description, constraints };
}

function docstring(t: TsType, indent: string): string {
  const lines: string[] = [];
  if (t.description) lines.push(comment(t.description, indent));
  if (t.constraints.length > 0) lines.push(`${indent}// ${t.constraints.map(([k, v]) => `${k}: ${pyScalar(v)}`).join(", ")}`);
  return lines.map((l) => l + "\n").join("");
}

const UNION_NAMES: Record<string, string> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "boolean",
  null: "null",
  object: "{}",
  array: "Array<any>",
};

function scalar(type: string, schema: Schema = {}): TsType {
  const keys = type === "string" ? ["maxLength", "minLength", "pattern"] : type === "number" || type === "integer" ? ["maximum", "minimum"] : [];
  return { ...baseOf(schema, keys), ts: () => (type === "integer" ? "number" : type) };
}

function objectType(schema: Schema, defs: Defs): TsType & { properties: { name: string; type: TsType; optional: boolean; default: unknown }[] } {
  const base = baseOf(schema);
  if (schema["$defs"] !== null && typeof schema["$defs"] === "object") {
    for (const [k, v] of Object.entries(schema["$defs"] as Record<string, Schema>)) defs.definitions.set(k, v);
  }
  const ap = schema["additionalProperties"];
  const additional: TsType | boolean | undefined = ap !== null && typeof ap === "object" ? parseType(ap as Schema, defs) : (ap as boolean | undefined);
  const propsIn = (schema["properties"] ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as string[]) : []);
  const properties = Object.entries(propsIn).map(([name, prop]) => ({
    name,
    type: parseType(prop as Schema | boolean, defs),
    optional: !required.has(name),
    default: prop !== null && typeof prop === "object" ? (prop as Schema)["default"] : undefined,
  }));
  return {
    ...base,
    properties,
    ts(indent: string): string {
      const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      const ordered = [...properties.filter((p) => !p.optional).sort(byName), ...properties.filter((p) => p.optional).sort(byName)];
      const inner = indent + INDENT;
      const fields = ordered.map((p) => {
        let doc = docstring(p.type, inner);
        if (p.default !== undefined && p.default !== null) {
          const repr =
            typeof p.default === "number" || typeof p.default === "boolean" ? pyScalar(p.default) : pythonJsonDumps(p.default, { ensureAscii: false });
          doc += `${inner}// Default: ${repr}\n`;
        }
        return `${doc}${inner}${p.name}${p.optional ? "?" : ""}: ${p.type.ts(inner)}`;
      });
      if (additional !== undefined) {
        const apType = additional === true ? "any" : additional === false ? "never" : additional.ts(inner);
        fields.push(`${inner}[k: string]: ${apType}`);
      }
      return fields.length === 0 ? "{}" : `{\n${fields.join(",\n")}\n${indent}}`;
    },
  };
}

function parseType(schema: Schema | boolean, defs: Defs): TsType {
  if (schema === true) return scalar("any");
  if (schema === false) return scalar("null");
  if (typeof schema["$ref"] === "string") {
    const name = defs.resolve(schema["$ref"]);
    return { ...baseOf(schema), ts: () => name };
  }
  if (Array.isArray(schema["anyOf"])) {
    const types = (schema["anyOf"] as Schema[]).map((s) => parseType(s, defs));
    return { ...baseOf(schema), ts: (indent) => types.map((t) => t.ts(indent)).join(" | ") };
  }
  if (Array.isArray(schema["enum"])) {
    const values = schema["enum"] as unknown[];
    return { ...baseOf(schema), ts: () => values.map((v) => (typeof v === "string" ? `"${v}"` : pyScalar(v))).join(" | ") };
  }
  const type = schema["type"];
  if (Array.isArray(type)) {
    const names = type.map((t) => {
      const n = UNION_NAMES[String(t)];
      if (n === undefined) throw new RendererError(`tool schema: unknown type ${JSON.stringify(t)} in a type list`);
      return n;
    });
    return { ...baseOf(schema), ts: () => names.join(" | ") };
  }
  if (type === "object") return objectType(schema, defs);
  if (type === "array") {
    const item = schema["items"] ? parseType(schema["items"] as Schema, defs) : scalar("any");
    return {
      ...baseOf(schema, ["minItems", "maxItems"]),
      ts(indent: string): string {
        const doc = docstring(item, indent + INDENT);
        return doc ? `Array<\n${doc}${indent}${INDENT}${item.ts(indent + INDENT)}\n${indent}>` : `Array<${item.ts(indent)}>`;
      },
    };
  }
  if (typeof type === "string") return scalar(type, schema);
  if (Object.keys(schema).length === 0) return scalar("any");
  throw new RendererError(`tool schema: cannot declare ${JSON.stringify(schema)} (expected type, enum, anyOf or $ref)`);
}

function functionTs(tool: ToolSpec): string {
  const defs = new Defs();
  const params = objectType(tool.parameters ?? {}, defs);
  const interfaces: string[] = [];
  // Render the parameters first so a self-reference ("#") is known before it is declared.
  const paramsTs = params.ts("");
  if (defs.selfRef) {
    const fields = params.properties.map((p) => `${docstring(p.type, INDENT)}${INDENT}${p.name}${p.optional ? "?" : ""}: ${p.type.ts(INDENT)}`);
    interfaces.push(`interface parameters {${fields.length ? `\n${fields.join(",\n")}\n` : ""}}`);
  }
  for (const [name, schema] of defs.definitions) {
    const desc = typeof schema["description"] === "string" && schema["description"] ? comment(schema["description"]) + "\n" : "";
    interfaces.push(`${desc}interface ${name} ${parseType(schema, defs).ts("")}`);
  }
  const typeDef = `type ${tool.name} = (_: ${defs.selfRef ? "parameters" : paramsTs}) => any;`;
  return [interfaces.join("\n"), tool.description ? comment(tool.description) : "", typeDef].filter((s) => s !== "").join("\n");
}

/** The tool_declare message content for Kimi K2.5/K2.6. */
export function encodeToolsTypeScript(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return "";
  return "# Tools\n\n## functions\nnamespace functions {\n" + tools.map(functionTs).join("\n") + "\n}\n";
}
