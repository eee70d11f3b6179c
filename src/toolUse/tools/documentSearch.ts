// Search over a local document collection (JSONL, one {"id", "title"?, "text"} per line): the
// offline stand-in for the cookbook's search tools (its search_tool recipe queries a vector store).
// Scores are Okapi BM25 over lower-cased words (k1 = 1.2, b = 0.75, the usual constants); the top
// `k` documents come back as "[id] title: text" lines.
import { z } from "zod";
import { readJsonlRecords } from "../../files/jsonlInput.ts";
import { defineTool, simpleToolResult, type Tool } from "../tool.ts";

export const SearchDocumentSchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  title: z.string().optional(),
  text: z.string(),
});
export type SearchDocument = z.output<typeof SearchDocumentSchema>;
const EXPECTED_DOCUMENT = '{"id", "title"?, "text"}';

export function readDocuments(file: string): SearchDocument[] {
  return readJsonlRecords(file, SearchDocumentSchema, EXPECTED_DOCUMENT);
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** What the search tool asks of an index: BM25's answers come at once, an embedding index's later. */
export interface SearchIndex {
  search(query: string, k: number): SearchDocument[] | Promise<SearchDocument[]>;
}

const BM25_K1 = 1.2;
const BM25_B = 0.75;

export class DocumentIndex implements SearchIndex {
  private readonly termCounts: Map<string, number>[];
  private readonly lengths: number[];
  private readonly averageLength: number;
  private readonly documentFrequency = new Map<string, number>();

  constructor(readonly documents: readonly SearchDocument[]) {
    this.lengths = [];
    this.termCounts = documents.map((d) => {
      const counts = new Map<string, number>();
      const all = words(`${d.title ?? ""} ${d.text}`);
      this.lengths.push(all.length);
      for (const w of all) counts.set(w, (counts.get(w) ?? 0) + 1);
      for (const w of counts.keys()) this.documentFrequency.set(w, (this.documentFrequency.get(w) ?? 0) + 1);
      return counts;
    });
    this.averageLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.lengths.length);
  }

  /** BM25's inverse document frequency (the +1 keeps words in most documents from going negative). */
  private idf(term: string): number {
    const n = this.documents.length;
    const df = this.documentFrequency.get(term) ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** The BM25 score of every document for the query's distinct words. */
  scores(query: string): number[] {
    const terms = [...new Set(words(query))];
    return this.termCounts.map((counts, idx) => {
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * this.lengths[idx]!) / (this.averageLength || 1));
      let score = 0;
      for (const t of terms) {
        const tf = counts.get(t) ?? 0;
        if (tf > 0) score += (this.idf(t) * tf * (BM25_K1 + 1)) / (tf + norm);
      }
      return score;
    });
  }

  /** Best `k` documents for the query, highest score first; documents sharing no word are left out. */
  search(query: string, k: number): SearchDocument[] {
    return this.scores(query)
      .map((score, idx) => ({ idx, score }))
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.idx - b.idx)
      .slice(0, k)
      .map((s) => this.documents[s.idx]!);
  }
}

/** What the search tool answers: one "[id] title: text" line per hit, or "No results.". */
export function formatSearchResult(hits: readonly SearchDocument[], maxChars: number): string {
  if (hits.length === 0) return "No results.";
  return hits.map((d) => `[${d.id}]${d.title ? ` ${d.title}:` : ""} ${d.text.slice(0, maxChars)}`).join("\n");
}

function isIndex(source: readonly SearchDocument[] | SearchIndex): source is SearchIndex {
  return !Array.isArray(source);
}

/** A `search` tool over the documents of a JSONL file, an in-memory list (BM25 both), or an index. */
export function documentSearchTool(
  source: string | readonly SearchDocument[] | SearchIndex,
  options: { k?: number; maxChars?: number; description?: string } = {},
): Tool {
  const index = typeof source === "string" ? new DocumentIndex(readDocuments(source)) : isIndex(source) ? source : new DocumentIndex(source);
  const k = options.k ?? 3;
  const maxChars = options.maxChars ?? 300;
  return defineTool({
    name: "search",
    description: options.description ?? "Search the document collection; returns the best matching documents",
    schema: z.object({ query: z.string().min(1).describe("words to look for") }),
    async handler({ query }) {
      return simpleToolResult(formatSearchResult(await index.search(query, k), maxChars));
    },
  });
}
