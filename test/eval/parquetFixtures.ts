// Small parquet files with the real datasets' column types (strings, int64, lists of strings,
// lists of structs), written in the hub's folder layout for the benchmark tests.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import type { SchemaElement } from "hyparquet";
import type { Message } from "../../src/renderers/types.ts";
import { getTextContent } from "../../src/renderers/content.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import { modelInputToInts } from "../../src/tinker/modelInput.ts";
import type { ModelInput, SampleResponse } from "../../src/tinker/types.ts";

export type Column =
  | { name: string; type: "string"; data: (string | null)[] }
  | { name: string; type: "int64"; data: number[] }
  | { name: string; type: "string_list"; data: string[][] }
  /** A list of structs whose fields are strings, int64s or lists of strings (nullable), like IFEval's kwargs. */
  | { name: string; type: "struct_list"; fields: Record<string, "string" | "int64" | "string_list">; data: Record<string, unknown>[][] };

const utf8 = (name: string, repetition: "OPTIONAL" | "REQUIRED" = "OPTIONAL"): SchemaElement => ({
  name,
  type: "BYTE_ARRAY",
  converted_type: "UTF8",
  repetition_type: repetition,
});

function schemaOf(c: Column): SchemaElement[] {
  switch (c.type) {
    case "string":
      return [utf8(c.name)];
    case "int64":
      return [{ name: c.name, type: "INT64", repetition_type: "OPTIONAL" }];
    case "string_list":
      return [
        { name: c.name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        utf8("element"),
      ];
    case "struct_list": {
      const fields = Object.entries(c.fields).flatMap(([k, t]): SchemaElement[] =>
        t === "string"
          ? [utf8(k)]
          : t === "int64"
            ? [{ name: k, type: "INT64", repetition_type: "OPTIONAL" }]
            : [
                { name: k, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
                { name: "list", repetition_type: "REPEATED", num_children: 1 },
                utf8("element"),
              ],
      );
      return [
        { name: c.name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", repetition_type: "OPTIONAL", num_children: Object.keys(c.fields).length },
        ...fields,
      ];
    }
  }
}

function dataOf(c: Column): unknown[] {
  if (c.type === "int64") return c.data.map((v) => BigInt(v));
  if (c.type !== "struct_list") return c.data;
  // Every struct has every field (null when unused), as the hub's files do; ints are int64.
  return c.data.map((list) =>
    list.map((s) =>
      Object.fromEntries(
        Object.entries(c.fields).map(([k, t]) => [k, s[k] === undefined || s[k] === null ? null : t === "int64" ? BigInt(s[k] as number) : s[k]]),
      ),
    ),
  );
}

export function parquetBytes(columns: Column[]): Uint8Array {
  const schema: SchemaElement[] = [{ name: "root", num_children: columns.length }, ...columns.flatMap(schemaOf)];
  return new Uint8Array(parquetWriteBuffer({ columnData: columns.map((c) => ({ name: c.name, data: dataOf(c) as never })), schema }));
}

export function writeParquet(path: string, columns: Column[]): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, parquetBytes(columns));
  return path;
}

/** A sampler that answers each prompt with `answer(last user message)`; the renderer is fakeRenderer's (character codes). */
export function scriptedSampler(answer: (userText: string) => string): SamplingClient & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    baseModel: "scripted",
    prompts,
    async sample(prompt: ModelInput, numSamples: number): Promise<SampleResponse> {
      const text = String.fromCharCode(...modelInputToInts(prompt));
      prompts.push(text);
      const user = text.slice(text.lastIndexOf("user: ") + 6).replace(/\nassistant:$/, "");
      const out = answer(user);
      return { sequences: Array.from({ length: numSamples }, () => ({ stop_reason: "stop" as const, tokens: [...out].map((c) => c.charCodeAt(0)) })) };
    },
    async computeLogprobs(): Promise<(number | null)[]> {
      throw new Error("not used");
    },
  } as SamplingClient & { prompts: string[] };
}

export function userText(messages: readonly Message[]): string {
  return getTextContent(messages[messages.length - 1]!);
}
