// Riding out a remote server that goes away mid-run. The HTTP client already retries each request
// through short outages; when a loop fails anyway, this decides whether the failure was the server
// going away (killed, restarted, unreachable for longer than the request retry budget) rather
// than a bad request. If so the run waits for the server with backoff and enters the loop again
// with a fresh service client: the loop resumes from its last checkpoint through
// openTrainingClient, which drops the metrics rows logged after that checkpoint, so every step
// ends up logged exactly once.
import { readCheckpoints } from "../runs/checkpoints.ts";
import type { ServerProbe, ServiceClient } from "../tinker/clients.ts";
import { APIConnectionError, APIStatusError, RequestFailedError } from "../tinker/errors.ts";

/** Resumes in a row that may fail before a new checkpoint is recorded before the run gives up. */
export const MAX_RESUMES_WITHOUT_PROGRESS = 3;

/** The error and its causes, outermost first. */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 8; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

function isConnectionFailure(err: unknown): boolean {
  return causes(err).some((e) => e instanceof APIConnectionError);
}

/**
 * Failures that a lost server produces: no connection, an id the server no longer knows (404,
 * 410), a server error, or a request that failed on the server's side. A request the server
 * refused as the caller's fault (other 4xx, category "user") is never resumed.
 */
export function mayMeanServerLoss(err: unknown): boolean {
  return causes(err).some(
    (e) =>
      e instanceof APIConnectionError ||
      (e instanceof APIStatusError && (e.status === 404 || e.status === 410 || e.status >= 500)) ||
      (e instanceof RequestFailedError && e.category !== "user"),
  );
}

export interface ServerWaitOptions {
  /** Give up when the server has not answered for this long. */
  waitMs: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Probes until the server answers (backoff 1 s, 2 s, 4 s … 30 s); "unreachable" once waitMs is spent. */
export async function waitForServer(client: ServiceClient, options: ServerWaitOptions, onWait?: (attempt: number) => void): Promise<ServerProbe> {
  if (client.probeServer === undefined) return "alive";
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = options.now ?? Date.now;
  const start = now();
  for (let attempt = 0; ; attempt++) {
    const probe = await client.probeServer();
    if (probe !== "unreachable") return probe;
    const delay = Math.min(2 ** attempt, 30) * 1000;
    if (now() - start + delay > options.waitMs) return "unreachable";
    onWait?.(attempt);
    await sleep(delay);
  }
}

/**
 * After a failure that may mean the server went away: waits for it (with the warnings a person
 * watching the log needs) and returns how it came back, or null when the failure should stand:
 * the server stayed away past `waitMs`, or it still knows our session and so failed the request
 * for a reason of its own (unless the request never got through at all).
 */
export async function awaitServerReturn(
  err: unknown,
  client: ServiceClient,
  options: ServerWaitOptions & { server: string; log: { warn(message: string): void } },
): Promise<Exclude<ServerProbe, "unreachable"> | null> {
  const { log, server, waitMs } = options;
  const reason = err instanceof Error ? err.message : String(err);
  const probe = await waitForServer(client, options, (attempt) => {
    if (attempt === 0) log.warn(`${server} does not answer (${reason}); waiting up to ${Math.round(waitMs / 1000)} s for it to come back`);
  });
  if (probe === "unreachable") {
    log.warn(`${server} did not come back within ${Math.round(waitMs / 1000)} s (server_wait_seconds)`);
    return null;
  }
  if (probe === "alive" && !isConnectionFailure(err)) return null;
  return probe;
}

export interface ServerLossOptions extends ServerWaitOptions {
  logDir: string;
  baseUrl: string;
  log: { info(message: string): void; warn(message: string): void };
}

/** Decides, failure by failure, whether a run resumes on a server that came back. */
export class ServerLossResumer {
  private resumes = 0;
  private withoutProgress = 0;
  private checkpointsAtLastResume = -1;

  constructor(private readonly options: ServerLossOptions) {}

  /** How many times the run was resumed so far. */
  get count(): number {
    return this.resumes;
  }

  /** True when the loop should be entered again with a fresh client; false to let `err` end the run. */
  async shouldResume(err: unknown, client: ServiceClient): Promise<boolean> {
    if (client.probeServer === undefined || !mayMeanServerLoss(err)) return false;
    const { log, baseUrl } = this.options;
    const reason = err instanceof Error ? err.message : String(err);
    const probe = await awaitServerReturn(err, client, { ...this.options, server: `the server at ${baseUrl}` });
    if (probe === null) return false;
    const checkpoints = readCheckpoints(this.options.logDir).length;
    this.withoutProgress = checkpoints === this.checkpointsAtLastResume ? this.withoutProgress + 1 : 1;
    this.checkpointsAtLastResume = checkpoints;
    if (this.withoutProgress > MAX_RESUMES_WITHOUT_PROGRESS) {
      log.warn(`the run failed ${this.withoutProgress} times in a row without recording a new checkpoint; giving up`);
      return false;
    }
    this.resumes++;
    const what = probe === "session_lost" ? "no longer knows this run's session (it restarted or dropped it)" : "answers again";
    log.warn(`the server at ${baseUrl} ${what}; resuming from the last checkpoint (resume ${this.resumes}; the failure was: ${reason})`);
    return true;
  }
}
