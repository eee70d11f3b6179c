// Tools an agent can call (the cookbook's tool_use/: `@tool`, Tool, ToolResult). A tool is a name,
// a description, a zod schema for its arguments and an async handler; the schema is the single
// source of the JSON Schema that renderers show the model and of the validation of its calls.
import { z } from "zod";
import type { ToolSpec } from "../renderers/types.ts";

export interface ToolResult {
  /** Text shown to the model as the tool message. */
  content: string;
  isError: boolean;
  /** Ends the episode after this call (EpisodeEndReason tool_stopped). */
  stopEpisode?: boolean;
  /** Numbers averaged into the training logs. */
  metrics?: Record<string, number>;
}

/** A successful result (the cookbook's simple_tool_result). */
export function simpleToolResult(content: string, extra: Omit<ToolResult, "content" | "isError"> = {}): ToolResult {
  return { content, isError: false, ...extra };
}

/** A failed call the model sees as an error message (the cookbook's error_tool_result). */
export function errorToolResult(message: string, extra: Omit<ToolResult, "content" | "isError"> = {}): ToolResult {
  return { content: `Error: ${message}`, isError: true, ...extra };
}

export interface ToolCallContext {
  /** Aborted when the call's time budget runs out. */
  signal: AbortSignal;
}

export interface Tool<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  handler(args: z.output<S>, context: ToolCallContext): Promise<ToolResult | string>;
}

const TOOL_NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Declares a tool; the name must be an identifier-like word so every call format can carry it. */
export function defineTool<S extends z.ZodObject>(tool: Tool<S>): Tool<S> {
  if (!TOOL_NAME_RE.test(tool.name)) {
    throw new Error(`defineTool: tool name ${JSON.stringify(tool.name)} must match ${TOOL_NAME_RE} (letters, digits, _ . -)`);
  }
  if (tool.description.trim().length === 0) throw new Error(`defineTool: tool ${tool.name} needs a description`);
  return tool;
}

/** The declaration renderers put in the prompt: name, description, JSON Schema of the arguments. */
export function toolSpec(tool: Tool): ToolSpec {
  const parameters = z.toJSONSchema(tool.schema, { io: "input" }) as Record<string, unknown>;
  delete parameters["$schema"];
  return { name: tool.name, description: tool.description, parameters };
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(arguments)"}: ${i.message}`).join("; ");
}

/**
 * Runs one call from its JSON argument text. Never throws: bad JSON, arguments that fail the
 * schema, a handler that throws and a handler that outlives `timeoutMs` all become error results.
 */
export async function runToolCall(tool: Tool, argumentsJson: string, timeoutMs: number): Promise<ToolResult> {
  let raw: unknown;
  try {
    raw = argumentsJson.trim() === "" ? {} : JSON.parse(argumentsJson);
  } catch (err) {
    return errorToolResult(`arguments of ${tool.name} are not valid JSON (${(err as Error).message}): ${argumentsJson.slice(0, 200)}`);
  }
  const parsed = tool.schema.safeParse(raw);
  if (!parsed.success) return errorToolResult(`invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(errorToolResult(`${tool.name} timed out after ${timeoutMs} ms`, { metrics: { tool_timeout: 1 } }));
    }, timeoutMs);
  });
  const call = (async (): Promise<ToolResult> => {
    try {
      const out = await tool.handler(parsed.data, { signal: controller.signal });
      return typeof out === "string" ? simpleToolResult(out) : out;
    } catch (err) {
      return errorToolResult(`${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  })();
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
