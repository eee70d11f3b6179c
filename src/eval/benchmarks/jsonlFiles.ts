// Benchmarks from local JSONL files: question/answer ({"question","answer"}, math grading or an
// LLM judge), multiple choice ({"question","choices",[…],"answer"} with the answer a letter, an
// index or the text of a choice; letter grading), and chat conversations ({"messages": […]})
// scored by the NLL of their assistant turns. Every error names the file and line.
import { basename, extname } from "node:path";
import { type JsonlInputLine, jsonlInputLines } from "../../files/jsonlInput.ts";
import { MessageSchema, type Message } from "../../renderers/types.ts";
import { BenchmarkDataError, type EvalExample, type GenerationBenchmark, type NllBenchmark, type NllExample } from "../benchmark.ts";
import { CHOICE_LETTERS, formatChoices, gradeChoice } from "../choiceGrading.ts";
import { grade } from "../../grading/index.ts";

function jsonlRecords(path: string): JsonlInputLine[] {
  const out = jsonlInputLines(path, { makeError: (m) => new BenchmarkDataError(m) });
  if (out.length === 0) throw new BenchmarkDataError(`${path}: no records`);
  return out;
}

function parseObject(text: string, where: string, expected: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new BenchmarkDataError(`${where}: not valid JSON (expected ${expected})`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new BenchmarkDataError(`${where}: expected ${expected}`);
  return v as Record<string, unknown>;
}

function textField(r: Record<string, unknown>, key: string, where: string): string {
  const v = r[key];
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  throw new BenchmarkDataError(`${where}: "${key}" must be a string (or number), got ${v === undefined ? "nothing" : JSON.stringify(v)}`);
}

function stem(path: string): string {
  return basename(path, extname(path)).replace(/[^A-Za-z0-9_.-]+/g, "_");
}

function requirePath(kind: string, source: string | null): string {
  if (source === null || source === "") throw new BenchmarkDataError(`${kind} needs a file: ${kind}:<path to .jsonl>`);
  return source;
}

/** `qa:<file>`: {"question", "answer"} per line; math grading, or an LLM judge when one is configured. */
export function qaJsonlBenchmark(source: string | null): GenerationBenchmark {
  const path = requirePath("qa", source);
  return {
    kind: "generation",
    name: `qa_${stem(path)}`,
    description: `Question/answer JSONL ${path}`,
    judgeable: true,
    defaults: { max_tokens: 1024 },
    async load() {
      return jsonlRecords(path).map(({ line, where, text }): EvalExample => {
        const r = parseObject(text, where, 'an object with "question" and "answer"');
        return { id: String(r["id"] ?? line), prompt: [{ role: "user", content: textField(r, "question", where) }], reference: textField(r, "answer", where) };
      });
    },
    grade: (response, example) => grade(response, example.reference, { mode: "lenient" }),
  };
}

/** The reference letter from a letter ("B"), a 0-based index (1) or the text of a choice. */
function referenceLetter(answer: unknown, choices: string[], where: string): string {
  if (typeof answer === "number" && Number.isInteger(answer) && answer >= 0 && answer < choices.length) return CHOICE_LETTERS[answer]!;
  if (typeof answer === "string") {
    const t = answer.trim();
    if (/^[A-Za-z]$/.test(t) && CHOICE_LETTERS.indexOf(t.toUpperCase()) < choices.length) return t.toUpperCase();
    const idx = choices.findIndex((c) => c.trim() === t);
    if (idx >= 0) return CHOICE_LETTERS[idx]!;
  }
  throw new BenchmarkDataError(
    `${where}: "answer" ${JSON.stringify(answer)} is not a letter A–${CHOICE_LETTERS[choices.length - 1]}, an index 0–${choices.length - 1} or the text of a choice`,
  );
}

export const CHOICE_INSTRUCTION = "Answer with the letter of the correct option.";

/** `mc:<file>`: {"question", "choices": [...], "answer"} per line; letter grading. */
export function multipleChoiceBenchmark(source: string | null): GenerationBenchmark {
  const path = requirePath("mc", source);
  return {
    kind: "generation",
    name: `mc_${stem(path)}`,
    description: `Multiple-choice JSONL ${path}, letter grading`,
    defaults: { max_tokens: 512 },
    async load() {
      return jsonlRecords(path).map(({ line, where, text }): EvalExample => {
        const r = parseObject(text, where, 'an object with "question", "choices" and "answer"');
        const choices = r["choices"];
        if (!Array.isArray(choices) || choices.length < 2 || choices.length > CHOICE_LETTERS.length || !choices.every((c) => typeof c === "string")) {
          throw new BenchmarkDataError(`${where}: "choices" must be a list of 2–${CHOICE_LETTERS.length} strings`);
        }
        const question = textField(r, "question", where);
        return {
          id: String(r["id"] ?? line),
          prompt: [{ role: "user", content: `${question}\n\n${formatChoices(choices)}\n\n${CHOICE_INSTRUCTION}` }],
          reference: referenceLetter(r["answer"], choices, where),
          choices,
        };
      });
    },
    grade: (response, example) => gradeChoice(response, example.reference, example.choices?.length ?? CHOICE_LETTERS.length),
  };
}

function conversationMessages(r: Record<string, unknown>, where: string): Message[] {
  const raw = r["messages"];
  if (!Array.isArray(raw)) throw new BenchmarkDataError(`${where}: "messages" must be a list of messages, e.g. [{"role": "user", "content": "Hi"}]`);
  return raw.map((m, i) => {
    const parsed = MessageSchema.safeParse(m);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.length > 0 ? `.${issue.path.map(String).join(".")}` : "";
      throw new BenchmarkDataError(`${where}: messages[${i}]${path}: ${issue.message}`);
    }
    return parsed.data;
  });
}

/** `nll:<file>`: chat conversations ({"messages": [...]}); the assistant turns' NLL per token. */
export function chatNllBenchmark(source: string | null): NllBenchmark {
  const path = requirePath("nll", source);
  return {
    kind: "nll",
    name: `nll_${stem(path)}`,
    description: `NLL of the assistant turns of chat JSONL ${path}`,
    defaults: {},
    async load() {
      return jsonlRecords(path).map(({ line, where, text }): NllExample => {
        const messages = conversationMessages(parseObject(text, where, 'an object with a "messages" list'), where);
        if (!messages.some((m) => m.role === "assistant")) throw new BenchmarkDataError(`${where}: no assistant message to score`);
        return { id: String(line), messages };
      });
    },
  };
}
