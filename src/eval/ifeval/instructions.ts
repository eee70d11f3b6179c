// IFEval's verifiable instructions (docs/eval.md#ifeval): one checker per instruction id
// of the google/IFEval dataset, following the rules of the paper's reference checkers (relations
// are "less than" / "at least", bullets and sections are counted the way the dataset's prompts
// describe them), plus the "loose" variants that forgive a leading/trailing line and markdown
// asterisks. A checker never throws on odd responses; unknown ids and bad kwargs are reported at
// load time by `validateInstruction`.
import { detectLanguage } from "./language.ts";

/** One instruction's arguments, as in the dataset's `kwargs` struct (absent keys are null there). */
export type InstructionArgs = Record<string, unknown>;

export class InstructionArgsError extends Error {
  override name = "InstructionArgsError";
}

function num(args: InstructionArgs, key: string): number {
  const v = args[key];
  const n = typeof v === "bigint" ? Number(v) : typeof v === "string" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n))
    throw new InstructionArgsError(`"${key}" must be a number, got ${JSON.stringify(typeof v === "bigint" ? String(v) : v)}`);
  return n;
}

function str(args: InstructionArgs, key: string): string {
  const v = args[key];
  if (typeof v !== "string") throw new InstructionArgsError(`"${key}" must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function strList(args: InstructionArgs, key: string): string[] {
  const v = args[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
    throw new InstructionArgsError(`"${key}" must be a list of strings, got ${JSON.stringify(v)}`);
  return v as string[];
}

/** IFEval's two comparisons. */
function relation(args: InstructionArgs, key: string): (count: number, target: number) => boolean {
  const r = str(args, key);
  if (r === "less than") return (c, t) => c < t;
  if (r === "at least") return (c, t) => c >= t;
  throw new InstructionArgsError(`"${key}" must be "less than" or "at least", got ${JSON.stringify(r)}`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Words as runs of letters, digits and underscores (the reference counts \w+ tokens). */
export function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}_]+/gu)?.length ?? 0;
}

const ABBREVIATIONS = /(?:^|\s)(?:mr|mrs|ms|dr|prof|sr|jr|st|vs|etc|inc|ltd|co|e\.g|i\.e|u\.s|a\.m|p\.m|no|fig)\.$/i;

/**
 * Sentences: text split after ., ! or ? (and closing quotes/brackets) followed by space, except
 * after a common abbreviation, a single initial or inside a number.
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  const re = /[.!?]+["'”’)\]]*(?=\s|$)/g;
  for (const m of text.matchAll(re)) {
    const end = m.index + m[0].length;
    const head = text.slice(start, end);
    if (m[0].startsWith(".") && m[0].length === 1) {
      if (ABBREVIATIONS.test(head) || /(?:^|\s)\p{Lu}\.$/u.test(head)) continue;
    }
    if (head.trim() !== "") out.push(head.trim());
    start = end;
  }
  const tail = text.slice(start).trim();
  if (tail !== "") out.push(tail);
  return out;
}

/** Tokens as a word tokenizer sees them: words (with inner apostrophes/hyphens) and numbers. */
function wordTokens(text: string): string[] {
  return text.match(/[\p{L}\p{N}_]+(?:['’-][\p{L}\p{N}_]+)*/gu) ?? [];
}

function isUpper(word: string): boolean {
  return word.toUpperCase() === word && word.toLowerCase() !== word;
}

type Checker = (response: string, args: InstructionArgs) => boolean;

const CHECKERS: Record<string, Checker> = {
  "keywords:existence": (r, a) => strList(a, "keywords").every((k) => new RegExp(escapeRegExp(k), "i").test(r)),
  "keywords:frequency": (r, a) => relation(a, "relation")((r.match(new RegExp(escapeRegExp(str(a, "keyword")), "gi")) ?? []).length, num(a, "frequency")),
  "keywords:forbidden_words": (r, a) => !strList(a, "forbidden_words").some((w) => new RegExp(`\\b${escapeRegExp(w)}\\b`, "i").test(r)),
  "keywords:letter_frequency": (r, a) => {
    const letter = str(a, "letter").toLowerCase();
    let count = 0;
    for (const ch of r.toLowerCase()) if (ch === letter) count++;
    return relation(a, "let_relation")(count, num(a, "let_frequency"));
  },
  "language:response_language": (r, a) => detectLanguage(r) === str(a, "language"),
  "length_constraints:number_sentences": (r, a) => relation(a, "relation")(splitSentences(r).length, num(a, "num_sentences")),
  "length_constraints:number_paragraphs": (r, a) => {
    // Paragraphs are separated by the markdown divider ***; empty ends are forgiven, empty middles are not.
    const parts = r.split(/\s?\*\*\*\s?/);
    let count = parts.length;
    for (let i = 0; i < parts.length; i++) {
      if (parts[i]!.trim() !== "") continue;
      if (i === 0 || i === parts.length - 1) count--;
      else return false;
    }
    return count === num(a, "num_paragraphs");
  },
  "length_constraints:number_words": (r, a) => relation(a, "relation")(countWords(r), num(a, "num_words")),
  "length_constraints:nth_paragraph_first_word": (r, a) => {
    const parts = r.split(/\n\n/);
    const count = parts.filter((p) => p.trim() !== "").length;
    const nth = num(a, "nth_paragraph");
    if (nth > count || nth < 1) return false;
    const paragraph = parts[nth - 1]!.trim();
    if (paragraph === "") return false;
    const word = paragraph.split(/\s+/)[0]!.replace(/^['"]+/, "");
    let first = "";
    for (const ch of word) {
      if (".,?!'\"".includes(ch)) break;
      first += ch.toLowerCase();
    }
    return count === num(a, "num_paragraphs") && first === str(a, "first_word").toLowerCase();
  },
  "detectable_content:number_placeholders": (r, a) => (r.match(/\[.*?\]/g) ?? []).length >= num(a, "num_placeholders"),
  "detectable_content:postscript": (r, a) => {
    const marker = str(a, "postscript_marker");
    const pattern =
      marker === "P.P.S" ? /\s*p\.\s?p\.\s?s.*$/m : marker === "P.S." ? /\s*p\.\s?s\..*$/m : new RegExp(`\\s*${escapeRegExp(marker.toLowerCase())}.*$`, "m");
    return pattern.test(r.toLowerCase());
  },
  "detectable_format:number_bullet_lists": (r, a) => {
    const stars = r.match(/^\s*\*[^*].*$/gm) ?? [];
    const dashes = r.match(/^\s*-.*$/gm) ?? [];
    return stars.length + dashes.length === num(a, "num_bullets");
  },
  "detectable_format:constrained_response": (r) => ["My answer is yes.", "My answer is no.", "My answer is maybe."].some((o) => r.trim().includes(o)),
  "detectable_format:number_highlighted_sections": (r, a) => {
    let count = 0;
    for (const h of r.match(/\*[^\n*]*\*/g) ?? []) if (h.replace(/^\*+|\*+$/g, "").trim() !== "") count++;
    for (const h of r.match(/\*\*[^\n*]*\*\*/g) ?? []) if (h.slice(2, -2).trim() !== "") count++;
    return count >= num(a, "num_highlights");
  },
  "detectable_format:multiple_sections": (r, a) =>
    r.split(new RegExp(`\\s?${escapeRegExp(str(a, "section_spliter"))}\\s?\\d+\\s?`)).length - 1 >= num(a, "num_sections"),
  "detectable_format:json_format": (r) => {
    let t = r.trim();
    for (const fence of ["```json", "```Json", "```JSON", "```"]) {
      if (t.startsWith(fence)) {
        t = t.slice(fence.length);
        break;
      }
    }
    if (t.endsWith("```")) t = t.slice(0, -3);
    try {
      JSON.parse(t.trim());
      return true;
    } catch {
      return false;
    }
  },
  "detectable_format:title": (r) => (r.match(/<<[^\n]+>>/g) ?? []).some((t) => t.replace(/^<+/, "").replace(/>+$/, "").trim() !== ""),
  "combination:two_responses": (r) => {
    const parts = r.split("******");
    const valid: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      if (parts[i]!.trim() === "") {
        if (i !== 0 && i !== parts.length - 1) return false;
      } else valid.push(parts[i]!);
    }
    return valid.length === 2 && valid[0]!.trim() !== valid[1]!.trim();
  },
  "combination:repeat_prompt": (r, a) => r.trim().toLowerCase().startsWith(str(a, "prompt_to_repeat").trim().toLowerCase()),
  "startend:end_checker": (r, a) =>
    r
      .trim()
      .replace(/^"+|"+$/g, "")
      .toLowerCase()
      .endsWith(str(a, "end_phrase").trim().toLowerCase()),
  "change_case:capital_word_frequency": (r, a) => relation(a, "capital_relation")(wordTokens(r).filter(isUpper).length, num(a, "capital_frequency")),
  "change_case:english_capital": (r) => isUpper(r) && detectLanguage(r) === "en",
  "change_case:english_lowercase": (r) => r.toLowerCase() === r && r.toUpperCase() !== r && detectLanguage(r) === "en",
  "punctuation:no_comma": (r) => !r.includes(","),
  "startend:quotation": (r) => {
    const t = r.trim();
    return t.length > 1 && t.startsWith('"') && t.endsWith('"');
  },
};

/** The arguments each instruction reads (kwargs keys), to check the dataset at load time. */
const REQUIRED_ARGS: Record<string, string[]> = {
  "keywords:existence": ["keywords"],
  "keywords:frequency": ["keyword", "frequency", "relation"],
  "keywords:forbidden_words": ["forbidden_words"],
  "keywords:letter_frequency": ["letter", "let_frequency", "let_relation"],
  "language:response_language": ["language"],
  "length_constraints:number_sentences": ["num_sentences", "relation"],
  "length_constraints:number_paragraphs": ["num_paragraphs"],
  "length_constraints:number_words": ["num_words", "relation"],
  "length_constraints:nth_paragraph_first_word": ["num_paragraphs", "nth_paragraph", "first_word"],
  "detectable_content:number_placeholders": ["num_placeholders"],
  "detectable_content:postscript": ["postscript_marker"],
  "detectable_format:number_bullet_lists": ["num_bullets"],
  "detectable_format:number_highlighted_sections": ["num_highlights"],
  "detectable_format:multiple_sections": ["section_spliter", "num_sections"],
  "combination:repeat_prompt": ["prompt_to_repeat"],
  "startend:end_checker": ["end_phrase"],
  "change_case:capital_word_frequency": ["capital_frequency", "capital_relation"],
};

export const INSTRUCTION_IDS: readonly string[] = Object.keys(CHECKERS);

/** Null when `id` is known and `args` has what it reads, else what is wrong. */
export function validateInstruction(id: string, args: InstructionArgs): string | null {
  if (CHECKERS[id] === undefined) return `unknown instruction id ${JSON.stringify(id)} (known: ${INSTRUCTION_IDS.join(", ")})`;
  for (const key of REQUIRED_ARGS[id] ?? []) if (args[key] === undefined || args[key] === null) return `${id} needs kwargs "${key}"`;
  try {
    // Reading the arguments checks their types and relations.
    CHECKERS[id]!("", args);
  } catch (err) {
    return `${id}: ${(err as Error).message}`;
  }
  return null;
}

/** Whether `response` follows instruction `id` (strict). Bad arguments count as not followed. */
export function followsInstruction(id: string, response: string, args: InstructionArgs): boolean {
  const check = CHECKERS[id];
  if (check === undefined) return false;
  try {
    return check(response, args);
  } catch {
    return false;
  }
}

/** The reference's loose variants: without the first line, the last line or both, and without asterisks. */
export function looseVariants(response: string): string[] {
  const lines = response.split("\n");
  const base = [response, lines.slice(1).join("\n").trim(), lines.slice(0, -1).join("\n").trim(), lines.slice(1, -1).join("\n").trim()];
  return [...base, ...base.map((v) => v.replaceAll("*", ""))];
}

/** Loose: some non-empty variant follows the instruction. */
export function followsInstructionLoosely(id: string, response: string, args: InstructionArgs): boolean {
  return looseVariants(response).some((v) => v.trim() !== "" && followsInstruction(id, v, args));
}
