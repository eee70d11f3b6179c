// Search over a local document collection (JSONL, one {"id", "title"?, "text"} per line): the
// offline stand-in for the cookbook's search tools. Scores are term-frequency × inverse document
// frequency over lower-cased words; the top `k` documents come back as "[id] title: text" lines.
import { readJsonlObjects } from "../../files/jsonlInput.ts";
import { z } from "zod";
import { defineTool, simpleToolResult, type Tool } from "../tool.ts";

export const SearchDocumentSchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  title: z.string().optional(),
  text: z.string(),
});
export type SearchDocument = z.output<typeof SearchDocumentSchema>;
const EXPECTED_DOCUMENT = '{"id", "title"?, "text"}';

export function readDocuments(file: string): SearchDocument[] {
  return readJsonlObjects(file, EXPECTED_DOCUMENT).map(({ where, row }) => {
    const parsed = SearchDocumentSchema.safeParse(row);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`${where}: key ${JSON.stringify(issue.path.join(".") || "(row)")}: ${issue.message}; expected ${EXPECTED_DOCUMENT}`);
    }
    return parsed.data;
  });
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export class DocumentIndex {
  private readonly termCounts: Map<string, number>[];
  private readonly documentFrequency = new Map<string, number>();

  constructor(readonly documents: readonly SearchDocument[]) {
    this.termCounts = documents.map((d) => {
      const counts = new Map<string, number>();
      for (const w of words(`${d.title ?? ""} ${d.text}`)) counts.set(w, (counts.get(w) ?? 0) + 1);
      for (const w of counts.keys()) this.documentFrequency.set(w, (this.documentFrequency.get(w) ?? 0) + 1);
      return counts;
    });
  }

  /** Best `k` documents for the query, highest score first; documents sharing no word are left out. */
  search(query: string, k: number): SearchDocument[] {
    const terms = [...new Set(words(query))];
    const n = this.documents.length;
    const scored = this.termCounts.map((counts, idx) => {
      let score = 0;
      for (const t of terms) {
        const tf = counts.get(t) ?? 0;
        if (tf > 0) score += (1 + Math.log(tf)) * Math.log(1 + n / (this.documentFrequency.get(t) ?? 1));
      }
      return { idx, score };
    });
    return scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.idx - b.idx)
      .slice(0, k)
      .map((s) => this.documents[s.idx]!);
  }
}

/** A `search` tool over the documents of a JSONL file (or an in-memory list). */
export function documentSearchTool(source: string | readonly SearchDocument[], options: { k?: number; maxChars?: number } = {}): Tool {
  const index = new DocumentIndex(typeof source === "string" ? readDocuments(source) : source);
  const k = options.k ?? 3;
  const maxChars = options.maxChars ?? 300;
  return defineTool({
    name: "search",
    description: "Search the document collection; returns the best matching documents",
    schema: z.object({ query: z.string().min(1).describe("words to look for") }),
    async handler({ query }) {
      const hits = index.search(query, k);
      if (hits.length === 0) return simpleToolResult("No results.");
      return simpleToolResult(hits.map((d) => `[${d.id}]${d.title ? ` ${d.title}:` : ""} ${d.text.slice(0, maxChars)}`).join("\n"));
    },
  });
}
