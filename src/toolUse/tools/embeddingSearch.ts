// Dense search over the same documents as the BM25 index (documentSearch.ts): every document is
// embedded once, a query is embedded when it comes, and the `k` documents of highest cosine
// similarity are returned in the same "[id] title: text" form. The embedder is any function from
// texts to vectors; `transformersEmbedder` makes one from a feature-extraction model through
// `@huggingface/transformers` (onnxruntime on the CPU): a local folder, a model shipped in
// fixtures/models, or a hub id found in the Hugging Face cache (downloaded only when online, as the
// engine's models are: src/engine/resolve.ts). The folder needs config.json, a tokenizer and
// onnx/model.onnx, the layout transformers.js exports have. Vectors are mean-pooled over the
// tokens and L2-normalised, as sentence-transformers models are used.
import { basename, dirname } from "node:path";
import * as transformers from "@huggingface/transformers";
import { type ResolveOptions, resolveModel } from "../../engine/resolve.ts";
import type { SearchDocument, SearchIndex } from "./documentSearch.ts";

/** Texts to vectors, one per text, all of one length. */
export type Embedder = (texts: readonly string[]) => Promise<Float32Array[]>;

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The text of a document that gets embedded: its title and text, as BM25 indexes them. */
function documentText(d: SearchDocument): string {
  return d.title ? `${d.title}: ${d.text}` : d.text;
}

export class EmbeddingIndex implements SearchIndex {
  private constructor(
    readonly documents: readonly SearchDocument[],
    private readonly vectors: readonly Float32Array[],
    private readonly embed: Embedder,
  ) {}

  /** Embeds every document, `batchSize` at a time. */
  static async build(documents: readonly SearchDocument[], embed: Embedder, batchSize = 32): Promise<EmbeddingIndex> {
    const vectors: Float32Array[] = [];
    for (let i = 0; i < documents.length; i += batchSize) {
      const batch = documents.slice(i, i + batchSize);
      const out = await embed(batch.map(documentText));
      if (out.length !== batch.length) throw new Error(`embedder returned ${out.length} vectors for ${batch.length} documents`);
      vectors.push(...out);
    }
    const width = vectors[0]?.length ?? 0;
    const odd = vectors.findIndex((v) => v.length !== width);
    if (odd >= 0) throw new Error(`embedder returned a vector of ${vectors[odd]!.length} for document ${documents[odd]!.id}, ${width} for the first`);
    return new EmbeddingIndex(documents, vectors, embed);
  }

  /** Cosine similarity of the query to every document. */
  async scores(query: string): Promise<number[]> {
    const [q] = await this.embed([query]);
    if (q === undefined) throw new Error("embedder returned no vector for the query");
    if (this.vectors.length > 0 && q.length !== this.vectors[0]!.length) {
      throw new Error(`the query's vector has ${q.length} dimensions, the documents' ${this.vectors[0]!.length}`);
    }
    return this.vectors.map((v) => cosine(q, v));
  }

  /** The `k` most similar documents, most similar first (ties in document order). */
  async search(query: string, k: number): Promise<SearchDocument[]> {
    return (await this.scores(query))
      .map((score, idx) => ({ idx, score }))
      .sort((a, b) => b.score - a.score || a.idx - b.idx)
      .slice(0, k)
      .map((s) => this.documents[s.idx]!);
  }
}

type FeatureExtractor = (texts: string[], options: { pooling: "mean"; normalize: boolean }) => Promise<{ dims: number[]; data: ArrayLike<number> }>;

/**
 * An embedder over a feature-extraction model (see the file comment for where it is looked for).
 * Nothing is downloaded when HF_HUB_OFFLINE is set or `resolve.allowDownload` is false.
 */
export async function transformersEmbedder(model: string, resolve: ResolveOptions = {}): Promise<Embedder> {
  const found = await resolveModel(model, { ...resolve, need: "onnx" });
  // transformers.js reads a local model as <localModelPath>/<id>; the folder is already found, so
  // it must not look anywhere else.
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = `${dirname(found.dir)}/`;
  const extractor = (await transformers.pipeline("feature-extraction", basename(found.dir), {
    local_files_only: true,
    dtype: "fp32",
  })) as unknown as FeatureExtractor;
  return async (texts) => {
    if (texts.length === 0) return [];
    const out = await extractor([...texts], { pooling: "mean", normalize: true });
    const [n, width] = out.dims;
    if (n !== texts.length || width === undefined)
      throw new Error(`${model}: feature extraction gave a tensor of shape [${out.dims.join(", ")}] for ${texts.length} texts`);
    return Array.from({ length: n }, (_, i) => Float32Array.from(Array.prototype.slice.call(out.data, i * width, (i + 1) * width) as number[]));
  };
}
