// Shared plumbing of the HTTP client objects: the transport, retry/poll policies, server feature
// flags, and typed JSON calls.
import type { z } from "zod";
import { TinkerError } from "../errors.ts";
import { dropNullFields } from "../types.ts";
import type { Clock } from "./clock.ts";
import type { Logger, ResolvedHttpOptions } from "./options.ts";
import { pollFuture, type PollSpec } from "./poll.ts";
import { sendWithRetries, type RetryPolicy } from "./retry.ts";
import { HttpTransport, type HttpRequest, type HttpResponse } from "./transport.ts";

/** Feature flags from POST client/config (spec §4.2); JSON-era defaults when the server has none. */
export interface ServerFlags {
  parallelFwdbwdChunks: boolean;
  fwdbwdMaxChunkLen: number;
  fwdbwdMaxChunkBytes: number;
  protoWriteFwdbwd: boolean;
  fwdViaFwdbwd: boolean;
  maxBillingPauseMs: number;
  sampleMaxConcurrentRequests: number;
}

export const JSON_ERA_FLAGS: ServerFlags = {
  parallelFwdbwdChunks: false,
  fwdbwdMaxChunkLen: 1024,
  fwdbwdMaxChunkBytes: 5_000_000,
  protoWriteFwdbwd: false,
  fwdViaFwdbwd: false,
  maxBillingPauseMs: 3_600_000,
  sampleMaxConcurrentRequests: 2000,
};

export function flagsFromConfig(cfg: Record<string, unknown>): ServerFlags {
  const num = (k: string, d: number): number => (typeof cfg[k] === "number" && Number.isFinite(cfg[k]) ? (cfg[k] as number) : d);
  const bool = (k: string, d: boolean): boolean => (typeof cfg[k] === "boolean" ? (cfg[k] as boolean) : d);
  return {
    parallelFwdbwdChunks: bool("parallel_fwdbwd_chunks", true),
    fwdbwdMaxChunkLen: num("fwdbwd_max_chunk_len", 1024),
    fwdbwdMaxChunkBytes: num("fwdbwd_max_chunk_bytes_count", 5_000_000),
    protoWriteFwdbwd: bool("proto_write_fwdbwd", false),
    fwdViaFwdbwd: bool("fwd_via_fwdbwd", false),
    maxBillingPauseMs: num("billing_exception_max_pause_duration_sec", 3600) * 1000,
    sampleMaxConcurrentRequests: num("sample_max_concurrent_requests", 2000),
  };
}

export class HttpContext {
  readonly transport: HttpTransport;
  readonly clock: Clock;
  readonly logger: Logger;
  flags: ServerFlags = JSON_ERA_FLAGS;

  constructor(readonly opts: ResolvedHttpOptions) {
    this.transport = new HttpTransport({
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey,
      headers: opts.headers,
      timeoutMs: opts.requestTimeoutMs,
    });
    this.clock = opts.clock;
    this.logger = opts.logger;
  }

  get maxBillingPauseMs(): number {
    return this.opts.maxBillingPauseMs ?? this.flags.maxBillingPauseMs;
  }

  retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
    return {
      clock: this.clock,
      logger: this.logger,
      budgetMs: this.opts.retryBudgetMs,
      maxBillingPauseMs: this.maxBillingPauseMs,
      ...overrides,
    };
  }

  send(req: HttpRequest, overrides?: Partial<RetryPolicy>): Promise<HttpResponse> {
    return sendWithRetries(this.transport, req, this.retryPolicy(overrides));
  }

  /** A request whose JSON answer is parsed with `schema`. */
  async call<S extends z.ZodType>(req: HttpRequest, schema: S, overrides?: Partial<RetryPolicy>): Promise<z.output<S>> {
    const res = await this.send(req, overrides);
    return parseResponse(schema, res.body(), `${req.method} ${req.path}`);
  }

  poll<T>(spec: PollSpec<T>): Promise<T> {
    return pollFuture(
      {
        transport: this.transport,
        clock: this.clock,
        logger: this.logger,
        pollTimeoutMs: this.opts.pollTimeoutMs,
        maxBillingPauseMs: this.maxBillingPauseMs,
        connectionBudgetMs: this.opts.retryBudgetMs,
        onQueueState: this.opts.onQueueState,
      },
      spec,
    );
  }
}

/**
 * Reads a JSON answer liberally: a `null` field counts as absent (servers built on pydantic, SkyRL
 * tx among them, send `"path": null` where the hosted service leaves the field out), unknown
 * fields are dropped by the schemas, and only what the client needs must be there.
 */
export function parseResponse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(dropNullFields(value));
  if (!r.success) {
    const issues = r.error.issues
      .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}${valueAt(value, i.path) === null ? " (the server sent null)" : ""}`)
      .join("; ");
    throw new TinkerError(`unexpected response from ${what}: ${issues}`);
  }
  return r.data;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const k of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}
