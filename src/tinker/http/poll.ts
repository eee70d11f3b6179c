// retrieve_future polling (docs/protocol.md#polling-for-results): poll until the result is ready, following the rules for
// queue states, long-poll timeouts, expired promises, rate limits, billing holds and failures.
import type { QueueState } from "../clients.ts";
import { APIConnectionError, RequestFailedError } from "../errors.ts";
import type { Clock } from "./clock.ts";
import type { Logger } from "./options.ts";
import { backoffMs, BILLING_PAUSE_STEP_MS, isEmptyBadRequest } from "./retry.ts";
import type { HttpResponse, HttpTransport } from "./transport.ts";

export interface PollContext {
  transport: HttpTransport;
  clock: Clock;
  logger: Logger;
  pollTimeoutMs: number;
  maxBillingPauseMs: number;
  /** Give up after connection errors lasting this long in a row. */
  connectionBudgetMs: number;
  onQueueState?: (state: QueueState, info: { requestId: string; reason?: string }) => void;
}

export interface PollSpec<T> {
  requestId: string;
  /** Parses a finished JSON result (throws on a bad shape). */
  parseJson: (value: unknown) => T;
  /** Decodes a finished protobuf result; without it a protobuf answer is an error. */
  decodeProto?: (bytes: Uint8Array) => T;
  /** Re-sends the original request after HTTP 410 and returns the new request id. */
  resubmit?: () => Promise<string>;
}

const QUEUE_STATES: ReadonlySet<string> = new Set(["active", "paused_capacity", "paused_rate_limit"]);
const MAX_RESUBMITS = 5;
const EMPTY_400_RETRIES = 3;
/** 5xx answers are polled again at once a few times, then with backoff, so a broken server is not hammered. */
const IMMEDIATE_5XX = 3;

export async function pollFuture<T>(ctx: PollContext, spec: PollSpec<T>): Promise<T> {
  const { transport, clock } = ctx;
  let requestId = spec.requestId;
  let rateLimited = 0;
  let connectionFailures = 0;
  let connectionSince = 0;
  let serverErrors = 0;
  let empty400 = 0;
  let resubmits = 0;
  let billingPausedMs = 0;
  let iteration = 0;
  for (;;) {
    const req = {
      method: "POST" as const,
      path: "/api/v1/retrieve_future",
      json: { request_id: requestId, allow_metadata_only: false },
      headers: { Accept: "application/x-protobuf, application/json", "X-Tinker-Request-Iteration": String(iteration++) },
      timeoutMs: ctx.pollTimeoutMs,
    };
    let res: HttpResponse;
    try {
      res = await transport.send(req);
    } catch (err) {
      if (!(err instanceof APIConnectionError)) throw err;
      if (connectionFailures === 0) connectionSince = clock.now();
      const delay = backoffMs(connectionFailures++);
      if (clock.now() - connectionSince + delay > ctx.connectionBudgetMs) throw err;
      await clock.sleep(delay);
      continue;
    }
    connectionFailures = 0;
    if (res.status === 200) {
      if (res.isProtobuf) {
        if (spec.decodeProto === undefined) {
          throw transport.statusError(req, res, " (protobuf result for a request type that has no protobuf decoder)");
        }
        return spec.decodeProto(res.bytes);
      }
      const body = res.body();
      if (typeof body !== "object" || body === null) throw transport.statusError(req, res, " (expected a JSON object)");
      const obj = body as Record<string, unknown>;
      if (obj["type"] === "try_again") {
        surfaceQueueState(ctx, requestId, obj);
        continue;
      }
      if (obj["status"] === "complete_metadata") continue;
      if (typeof obj["error"] === "string" && Object.keys(obj).every((k) => k === "error" || k === "category" || k === "type")) {
        throw new RequestFailedError(transport.redact(obj["error"]), requestId, typeof obj["category"] === "string" ? obj["category"] : "unknown");
      }
      return spec.parseJson(body);
    }
    if (res.status === 408) {
      const body = res.body();
      if (typeof body === "object" && body !== null) surfaceQueueState(ctx, requestId, body as Record<string, unknown>);
      continue;
    }
    if (res.status === 410) {
      if (spec.resubmit === undefined || resubmits >= MAX_RESUBMITS) {
        throw transport.statusError(req, res, ` (request ${requestId} expired${spec.resubmit ? ` ${resubmits} times` : " and cannot be resubmitted"})`);
      }
      resubmits++;
      ctx.logger.warn(`request ${requestId} expired on the server (HTTP 410); resubmitting it`);
      requestId = await spec.resubmit();
      continue;
    }
    if (res.status === 429) {
      await clock.sleep(backoffMs(rateLimited++));
      continue;
    }
    if (res.status >= 500) {
      if (serverErrors >= IMMEDIATE_5XX) await clock.sleep(backoffMs(serverErrors - IMMEDIATE_5XX));
      serverErrors++;
      continue;
    }
    if (res.status === 402) {
      if (billingPausedMs + BILLING_PAUSE_STEP_MS > ctx.maxBillingPauseMs) {
        throw transport.statusError(req, res, ` (billing hold lasted longer than ${ctx.maxBillingPauseMs} ms)`);
      }
      if (billingPausedMs === 0) ctx.logger.warn(`request ${requestId}: billing hold (HTTP 402); pausing`);
      billingPausedMs += BILLING_PAUSE_STEP_MS;
      await clock.sleep(BILLING_PAUSE_STEP_MS);
      continue;
    }
    if (isEmptyBadRequest(res) && empty400 < EMPTY_400_RETRIES) {
      empty400++;
      continue;
    }
    throw transport.statusError(req, res, ` (request ${requestId})`);
  }
}

function surfaceQueueState(ctx: PollContext, requestId: string, obj: Record<string, unknown>): void {
  const state = obj["queue_state"];
  if (typeof state !== "string" || !QUEUE_STATES.has(state) || ctx.onQueueState === undefined) return;
  const reason = typeof obj["queue_state_reason"] === "string" ? obj["queue_state_reason"] : undefined;
  ctx.onQueueState(state as QueueState, reason === undefined ? { requestId } : { requestId, reason });
}
