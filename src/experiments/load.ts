// Reads an experiment file — a TypeScript/JavaScript module (default export, or `experiment`), a
// JSON file or a YAML file — and validates it with ExperimentSchema. Errors name the file, the key
// and, for JSON and YAML, the line.
import { existsSync, readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isNode, LineCounter, parseDocument, type Document } from "yaml";
import type { z } from "zod";
import { ExperimentFileError, ExperimentSchema, type Experiment } from "./schema.ts";
import { runtimeImport } from "../runtimeImport.ts";

export interface LoadedExperiment {
  /** Absolute path of the file. */
  file: string;
  experiment: Experiment;
}

const MODULE_EXTS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);
const DATA_EXTS = new Set([".json", ".yaml", ".yml"]);

/** `runs[1].overrides.learning_rate` for a zod path. */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  return out || "(top level)";
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  if (issue.code === "invalid_union") {
    // The branch that got furthest says the most (e.g. the object form of a test set).
    const deepest = issue.errors.flat().sort((a, b) => b.path.length - a.path.length)[0];
    if (deepest !== undefined && deepest.path.length > 0) return `${formatKeyPath(deepest.path)}: ${issueText(deepest)}`;
  }
  return issue.message;
}

/** Validates a parsed experiment; `lineOf` maps a key path to its line in the source, when known. */
export function validateExperiment(raw: unknown, file: string, lineOf: (path: readonly PropertyKey[]) => number | undefined = () => undefined): Experiment {
  const parsed = ExperimentSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // The key an unknown-key issue is about is one level below its path.
  const at = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
  let line: number | undefined;
  for (let n = at.length; n >= 0 && line === undefined; n--) line = lineOf(at.slice(0, n));
  throw new ExperimentFileError(`${file}${line !== undefined ? `:${line}` : ""}: ${formatKeyPath(issue.path)}: ${issueText(issue)}`);
}

function lineFinder(doc: Document, counter: LineCounter): (path: readonly PropertyKey[]) => number | undefined {
  return (path) => {
    const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
    if (!isNode(node) || node.range === undefined || node.range === null) return undefined;
    return counter.linePos(node.range[0]).line;
  };
}

function loadDataFile(file: string): Experiment {
  const text = readFileSync(file, "utf8");
  if (extname(file) === ".json") {
    try {
      JSON.parse(text);
    } catch (err) {
      throw new ExperimentFileError(`${file}: not valid JSON (${(err as Error).message})`);
    }
  }
  // JSON is YAML too: one parser gives the lines of keys for both.
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    const line = error.pos[0] !== undefined ? counter.linePos(error.pos[0]).line : undefined;
    throw new ExperimentFileError(`${file}${line !== undefined ? `:${line}` : ""}: not valid YAML (${error.message.split("\n")[0]})`);
  }
  return validateExperiment(doc.toJS(), file, lineFinder(doc, counter));
}

function isCommonJsExports(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && (value as Record<string, unknown>)["__esModule"] === true;
}

async function loadModule(file: string): Promise<Experiment> {
  let mod: Record<string, unknown>;
  try {
    if (/\.[mc]?ts$/.test(file)) {
      // tsx is a dependency: TypeScript experiment files load the same from the sources and from dist/.
      const { tsImport } = await runtimeImport<typeof import("tsx/esm/api")>("tsx/esm/api");
      mod = (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
    } else mod = await runtimeImport<Record<string, unknown>>(pathToFileURL(file).href);
  } catch (err) {
    throw new ExperimentFileError(`${file}: cannot load the module (${(err as Error).message.split("\n")[0]})`);
  }
  // A file outside an ES-module package loads as CommonJS: its exports object is then the default.
  const exports = isCommonJsExports(mod["default"]) ? mod["default"] : mod;
  const value = exports["default"] ?? exports["experiment"];
  if (value === undefined)
    throw new ExperimentFileError(`${file}: export the experiment as default (export default defineExperiment({...})) or as \`experiment\``);
  return validateExperiment(value, file);
}

export async function loadExperimentFile(path: string): Promise<LoadedExperiment> {
  const file = resolve(path);
  if (!existsSync(file)) throw new ExperimentFileError(`${path}: no such experiment file`);
  const ext = extname(file);
  if (MODULE_EXTS.has(ext)) return { file, experiment: await loadModule(file) };
  if (DATA_EXTS.has(ext)) return { file, experiment: loadDataFile(file) };
  throw new ExperimentFileError(`${path}: expected a .ts/.js module, a .json or a .yaml/.yml experiment file`);
}
