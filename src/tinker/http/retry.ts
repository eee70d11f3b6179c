// Submission-side retries (docs/protocol.md#retries): transient failures are retried with backoff for a bounded
// time, billing holds pause, and everything else fails at once with the server's message.
import { APIConnectionError } from "../errors.ts";
import type { Clock } from "./clock.ts";
import type { Logger } from "./options.ts";
import type { HttpRequest, HttpResponse, HttpTransport } from "./transport.ts";

export interface RetryPolicy {
  clock: Clock;
  logger: Logger;
  /** Stop retrying once this much time has passed since the first attempt. */
  budgetMs: number;
  maxBillingPauseMs: number;
  /** Overrides the 429 delay (sampling backpressure waits a fixed time, unbounded by attempts). */
  delayOn429?: () => number;
  /** How many bare HTTP 400s (proxy rejections) to retry. */
  emptyBadRequestRetries?: number;
}

export const BILLING_PAUSE_STEP_MS = 5_000;

export function backoffMs(attempt: number): number {
  return Math.min(2 ** attempt, 30) * 1000;
}

/** retry-after-ms / retry-after (seconds or HTTP date), honoured only when in (0, 60] s. */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") !== null && ms > 0 && ms <= 60_000) return ms;
  const ra = headers.get("retry-after");
  if (ra === null) return undefined;
  const secs = Number(ra);
  const delay = Number.isFinite(secs) ? secs * 1000 : Date.parse(ra) - now;
  return delay > 0 && delay <= 60_000 ? delay : undefined;
}

export function isEmptyBadRequest(res: HttpResponse): boolean {
  return res.status === 400 && res.bytes.length === 0;
}

/** Sends `req` until a 2xx/3xx answer; throws APIStatusError / APIConnectionError otherwise. */
export async function sendWithRetries(transport: HttpTransport, req: HttpRequest, policy: RetryPolicy): Promise<HttpResponse> {
  const { clock } = policy;
  const request: HttpRequest = { ...req, idempotencyKey: req.idempotencyKey ?? transport.newIdempotencyKey() };
  const start = clock.now();
  let attempt = 0;
  let emptyBadRequests = 0;
  let billingPausedMs = 0;
  for (;;) {
    let res: HttpResponse;
    try {
      res = await transport.send(request);
    } catch (err) {
      if (!(err instanceof APIConnectionError)) throw err;
      const delay = backoffMs(attempt++);
      if (clock.now() - start + delay > policy.budgetMs) throw err;
      await clock.sleep(delay);
      continue;
    }
    if (res.status < 400) return res;
    const should = res.headers.get("x-should-retry");
    if (should === "false") throw transport.statusError(request, res);
    if (res.status === 402) {
      if (billingPausedMs + BILLING_PAUSE_STEP_MS > policy.maxBillingPauseMs) {
        throw transport.statusError(request, res, ` (billing hold lasted longer than ${policy.maxBillingPauseMs} ms)`);
      }
      if (billingPausedMs === 0) policy.logger.warn(`${request.path}: billing hold (HTTP 402); pausing and retrying`);
      billingPausedMs += BILLING_PAUSE_STEP_MS;
      await clock.sleep(BILLING_PAUSE_STEP_MS);
      continue;
    }
    if (isEmptyBadRequest(res) && should !== "true") {
      if (emptyBadRequests++ >= (policy.emptyBadRequestRetries ?? 3)) throw transport.statusError(request, res);
      continue;
    }
    // 409 means the server already holds a different request under this seq_id (or a duplicate
    // name): retrying cannot help, so unlike the Python SDK it is never retried.
    if (res.status === 409) throw transport.statusError(request, res, " (conflict; not retried)");
    const retryable = should === "true" || res.status === 408 || res.status === 429 || res.status >= 500;
    if (!retryable) throw transport.statusError(request, res);
    const delay = retryAfterMs(res.headers, clock.now()) ?? (res.status === 429 && policy.delayOn429 ? policy.delayOn429() : backoffMs(attempt));
    attempt++;
    if (res.status !== 429 || policy.delayOn429 === undefined) {
      if (clock.now() - start + delay > policy.budgetMs) {
        throw transport.statusError(request, res, ` (gave up after retrying for ${Math.round((clock.now() - start) / 1000)} s)`);
      }
    }
    await clock.sleep(delay);
  }
}
