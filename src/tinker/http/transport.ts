// One HTTP exchange with the server over Node's fetch. Knows headers, timeouts and how to turn a
// response into an error message; knows nothing about retries. The API key only ever goes into the
// X-API-Key header: every message built here passes through redact().
import { randomUUID } from "node:crypto";
import { APIConnectionError, APIStatusError } from "../errors.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface HttpRequest {
  method: HttpMethod;
  /** Path under the base URL, e.g. "/api/v1/create_session". */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  /** Same key on every retry of one logical request. */
  idempotencyKey?: string;
  timeoutMs?: number;
}

export class HttpResponse {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly bytes: Uint8Array,
  ) {}

  get contentType(): string {
    return (this.headers.get("content-type") ?? "").toLowerCase();
  }

  get isProtobuf(): boolean {
    return this.contentType.startsWith("application/x-protobuf");
  }

  text(): string {
    return new TextDecoder().decode(this.bytes);
  }

  /** The body as JSON when it parses, else as text (empty string for an empty body). */
  body(): unknown {
    const t = this.text();
    if (t.length === 0) return "";
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return t;
    }
  }
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  headers: Record<string, string>;
  timeoutMs: number;
}

export class HttpTransport {
  constructor(private readonly o: TransportOptions) {}

  get baseUrl(): string {
    return this.o.baseUrl;
  }

  newIdempotencyKey(): string {
    return `tinker-ts-retry-${randomUUID()}`;
  }

  url(req: Pick<HttpRequest, "path" | "query">): string {
    const u = new URL(this.o.baseUrl + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** Sends once. Network failures and timeouts become APIConnectionError; any status is returned. */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const headers: Record<string, string> = { ...this.o.headers, ...req.headers };
    if (this.o.apiKey !== undefined) headers["X-API-Key"] = this.o.apiKey;
    if (req.idempotencyKey !== undefined && req.method !== "GET") headers["X-Idempotency-Key"] = req.idempotencyKey;
    let body: Uint8Array | string | undefined;
    if (req.body !== undefined) {
      body = req.body;
      headers["Content-Type"] = req.contentType ?? "application/octet-stream";
    } else if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers["Content-Type"] = "application/json";
    }
    const what = `${req.method} ${req.path}`;
    try {
      const res = await fetch(this.url(req), {
        method: req.method,
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(req.timeoutMs ?? this.o.timeoutMs),
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      return new HttpResponse(res.status, res.headers, bytes);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const reason = e.name === "TimeoutError" ? `timed out after ${req.timeoutMs ?? this.o.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new APIConnectionError(this.redact(`${what} to ${this.o.baseUrl}: connection failed (${reason})`));
    }
  }

  statusError(req: Pick<HttpRequest, "method" | "path">, res: HttpResponse, hint = ""): APIStatusError {
    const body = res.body();
    const detail = typeof body === "string" ? body : JSON.stringify(body);
    const short = detail.length > 500 ? `${detail.slice(0, 500)}…` : detail;
    const msg = `${req.method} ${req.path} failed with HTTP ${res.status}${short ? `: ${short}` : " (empty body)"}${hint}`;
    return new APIStatusError(this.redact(msg), res.status, body);
  }

  /** Removes the API key from any text that might reach a log or an error message. */
  redact(text: string): string {
    const key = this.o.apiKey;
    return key !== undefined && key.length > 0 ? text.split(key).join("<redacted>") : text;
  }
}
