// The state every handler shares and the helpers they build on: body parsing, validation, and
// queueing a model request in seq_id order behind a future.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { z } from "zod";
import type { EmbeddedRestClient, EmbeddedServiceClient } from "../engine/index.ts";
import { ArchiveSigner } from "./archives.ts";
import { FairScheduler } from "./fairScheduler.ts";
import { toHttpError, zodDetail } from "./errors.ts";
import { ServedFeatures } from "./features.ts";
import { FutureStore, type FinishedValue } from "./futures.ts";
import { HttpError, parseJsonBody } from "./http.ts";
import type { ResolvedServeOptions, ServeHooks } from "./options.ts";
import { Registry, type ModelEntry } from "./registry.ts";

export interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Decoded path segments captured by the route pattern. */
  params: string[];
  body: Buffer;
  /** Aborted when the client goes away or the server closes. */
  signal: AbortSignal;
}

export type Reply =
  | { status?: number; json?: unknown; headers?: Record<string, string> }
  | { status?: number; bytes: Uint8Array; contentType: string }
  /** A body streamed as it is produced (checkpoint archives). */
  | { status?: number; stream: Readable; contentType: string; headers?: Record<string, string> };

export type Handler = (core: ServerCore, call: Call) => Promise<Reply> | Reply;

/** The submission step of a queued request: resolves once the engine has queued the work. */
export type Submit = () => Promise<{ done: Promise<FinishedValue> }>;

export class ServerCore {
  readonly futures: FutureStore;
  readonly registry: Registry;
  readonly rest: EmbeddedRestClient;
  readonly archives = new ArchiveSigner();
  /** Turns at the engine, round-robin between sessions (src/server/fairScheduler.ts). */
  readonly scheduler: FairScheduler;
  /** The configured narrowing of models, LoRA rank and top-k prompt logprobs. */
  readonly features: ServedFeatures;

  constructor(
    readonly service: EmbeddedServiceClient,
    readonly options: ResolvedServeOptions,
    readonly log: (line: string) => void,
    readonly hooks: Pick<ServeHooks, "wrapOpenAISampler"> = {},
  ) {
    this.futures = new FutureStore(options.futureRetentionSec * 1000, options.deliveredRetentionSec * 1000);
    this.registry = new Registry(service, options.sessionTimeoutSec * 1000, log, options.maxSamplersPerSession, options.seqGapTimeoutSec * 1000);
    this.rest = service.createRestClient();
    this.scheduler = new FairScheduler(options.maxSampleTokens);
    this.features = new ServedFeatures(options);
  }

  /** Parses a JSON body against `schema`: 400 for bad JSON, 422 naming the fields for a bad shape. */
  parse<S extends z.ZodType>(call: Call, schema: S): z.output<S> {
    const r = schema.safeParse(parseJsonBody(call.body));
    if (!r.success) throw new HttpError(422, zodDetail(r.error));
    return r.data;
  }

  /** Identifies a request's payload for the (model, seq_id) idempotency check. */
  digest(call: Call): string {
    return createHash("sha256").update(call.url.pathname).update("\0").update(call.body).digest("hex");
  }

  /**
   * Queues a model request. `prepare` validates synchronously and returns the submission; when it
   * throws, the seq_id is still consumed (by a failed future) so the model's later requests are not
   * held forever behind the gap, and the error is the HTTP answer.
   */
  enqueue(m: ModelEntry, seqId: number | undefined, digest: string, prepare: () => Submit, cost = 1): { request_id: string; model_id: string } {
    const acc = m.seq.accept(seqId, digest, () => this.futures.newId());
    if (!acc.isNew) return { request_id: acc.requestId, model_id: m.id };
    this.futures.create(acc.requestId);
    let submit: Submit;
    try {
      submit = prepare();
    } catch (err) {
      this.futures.fail(acc.requestId, err);
      m.seq.schedule(
        acc.seqId,
        async () => undefined,
        () => undefined,
      );
      throw toHttpError(err);
    }
    m.seq.schedule(
      acc.seqId,
      async () => {
        try {
          // The turn lasts until the work is done, so the scheduler knows what the engine holds.
          await this.scheduler.run(m.sessionId, cost, async () => {
            const s = await submit();
            this.futures.settleWith(acc.requestId, s.done);
            await s.done.catch(() => undefined);
          });
        } catch (err) {
          this.futures.fail(acc.requestId, err);
        }
      },
      (err) => this.futures.fail(acc.requestId, err),
    );
    return { request_id: acc.requestId, model_id: m.id };
  }

  /** A future over work that needs no ordering (create_model, samples, unload). */
  detached(work: () => Promise<FinishedValue>, id?: string): string {
    const requestId = this.futures.create(id);
    // Deferred so a synchronous throw in `work` also lands in the future.
    this.futures.settleWith(requestId, Promise.resolve().then(work));
    return requestId;
  }
}
