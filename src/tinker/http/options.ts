// Options of the HTTP client and how they fall back to the environment (docs/protocol.md#endpoint-and-environment).
import type { QueueState } from "../clients.ts";
import type { Clock } from "./clock.ts";

export const DEFAULT_BASE_URL = "https://tinker.thinkingmachines.dev/services/tinker-prod";
/** The SDK version we report; the JSON wire format we speak is the one of SDK ≤ 0.24. */
export const SDK_VERSION = "0.16.1";

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

export const consoleLogger: Logger = {
  info: (m) => console.error(`[tinker] ${m}`),
  warn: (m) => console.error(`[tinker] warning: ${m}`),
};

export interface HttpClientOptions {
  /** Defaults to TINKER_BASE_URL, then the hosted service. */
  baseUrl?: string;
  /** Defaults to TINKER_API_KEY. Sent as X-API-Key; never logged or put in error messages. */
  apiKey?: string;
  projectId?: string;
  userMetadata?: Record<string, string>;
  tags?: string[];
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  clock?: Clock;
  logger?: Logger;
  /** Called whenever a queued request reports where it stands (try_again / 408 with queue_state). */
  onQueueState?: (state: QueueState, info: { requestId: string; reason?: string }) => void;
  /** Per-request timeout of submissions and REST calls (default 60 s). */
  requestTimeoutMs?: number;
  /** Client-side timeout of one retrieve_future long poll (default 45 s). */
  pollTimeoutMs?: number;
  /** How long submissions keep retrying transient failures (default 5 min). */
  retryBudgetMs?: number;
  /** Longest total pause on 402 billing holds before giving up (default: server flag or 1 h). */
  maxBillingPauseMs?: number;
  heartbeatIntervalMs?: number;
  /** Force the protobuf forward_backward body on or off; default follows client/config. */
  protoForwardBackward?: boolean;
  env?: Record<string, string | undefined>;
}

export interface ResolvedHttpOptions {
  baseUrl: string;
  apiKey: string | undefined;
  projectId: string | undefined;
  userMetadata: Record<string, string>;
  tags: string[];
  headers: Record<string, string>;
  clock: Clock;
  logger: Logger;
  onQueueState: HttpClientOptions["onQueueState"];
  requestTimeoutMs: number;
  pollTimeoutMs: number;
  retryBudgetMs: number;
  maxBillingPauseMs: number | undefined;
  heartbeatIntervalMs: number;
  protoForwardBackward: boolean | undefined;
}

export function resolveHttpOptions(o: HttpClientOptions, clock: Clock): ResolvedHttpOptions {
  const env = o.env ?? process.env;
  const base = o.baseUrl ?? (env["TINKER_BASE_URL"] || DEFAULT_BASE_URL);
  const tags =
    o.tags ??
    (env["TINKER_TAGS"]
      ? env["TINKER_TAGS"]
          .split(",")
          .map((t) => t.trim())
          .filter(Boolean)
      : []);
  return {
    baseUrl: base.replace(/\/+$/, ""),
    apiKey: o.apiKey ?? (env["TINKER_API_KEY"] || undefined),
    projectId: o.projectId ?? env["TINKER_PROJECT_ID"],
    userMetadata: o.userMetadata ?? {},
    tags,
    headers: o.headers ?? {},
    clock,
    logger: o.logger ?? consoleLogger,
    onQueueState: o.onQueueState,
    requestTimeoutMs: o.requestTimeoutMs ?? 60_000,
    pollTimeoutMs: o.pollTimeoutMs ?? 45_000,
    retryBudgetMs: o.retryBudgetMs ?? 300_000,
    maxBillingPauseMs: o.maxBillingPauseMs,
    heartbeatIntervalMs: o.heartbeatIntervalMs ?? 10_000,
    protoForwardBackward: o.protoForwardBackward,
  };
}
