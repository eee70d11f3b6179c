// The session (docs/protocol.md#session-bootstrap-and-heartbeat): client/config flags, create_session, and a heartbeat every 10 s that
// never blocks other work and only warns when it keeps failing.
import type { ServerProbe } from "../clients.ts";
import { APIConnectionError, APIStatusError } from "../errors.ts";
import { CreateSessionResponseSchema } from "../types.ts";
import { flagsFromConfig, type HttpContext } from "./context.ts";
import { SDK_VERSION } from "./options.ts";

/** Warn when heartbeats have failed for this long (the server drops sessions soon after). */
export const HEARTBEAT_WARN_AFTER_MS = 120_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;

export class HttpSession {
  private sessionId: Promise<string> | undefined;
  private configLoaded: Promise<void> | undefined;
  private stopHeartbeat: (() => void) | undefined;
  private modelSeq = 0;
  private samplingSeq = 0;
  private lastHeartbeatOk = 0;
  private heartbeatInFlight = false;
  private warned = false;

  constructor(private readonly ctx: HttpContext) {}

  /** Fetches the server's feature flags once; servers without client/config keep JSON-era defaults. */
  loadConfig(): Promise<void> {
    this.configLoaded ??= (async () => {
      try {
        const res = await this.ctx.send({ method: "POST", path: "/api/v1/client/config", json: { sdk_version: SDK_VERSION } });
        const body = res.body();
        if (typeof body === "object" && body !== null) this.ctx.flags = flagsFromConfig(body as Record<string, unknown>);
      } catch (err) {
        if (!(err instanceof APIStatusError && (err.status === 404 || err.status === 405))) throw err;
      }
    })();
    return this.configLoaded;
  }

  /** The session id, creating the session on first use. */
  id(): Promise<string> {
    this.sessionId ??= this.create();
    // A failed creation may be retried by a later call.
    this.sessionId.catch(() => {
      this.sessionId = undefined;
    });
    return this.sessionId;
  }

  nextModelSeqId(): number {
    return this.modelSeq++;
  }

  nextSamplingSessionSeqId(): number {
    return this.samplingSeq++;
  }

  private async create(): Promise<string> {
    await this.loadConfig();
    const o = this.ctx.opts;
    const body: Record<string, unknown> = {
      tags: o.tags,
      user_metadata: o.userMetadata,
      sdk_version: SDK_VERSION,
      type: "create_session",
    };
    if (o.projectId !== undefined) body["project_id"] = o.projectId;
    const res = await this.ctx.call({ method: "POST", path: "/api/v1/create_session", json: body }, CreateSessionResponseSchema);
    if (res.info_message) this.ctx.logger.info(res.info_message);
    if (res.warning_message) this.ctx.logger.warn(res.warning_message);
    if (res.error_message) this.ctx.logger.warn(res.error_message);
    this.startHeartbeat(res.session_id);
    return res.session_id;
  }

  private startHeartbeat(sessionId: string): void {
    this.lastHeartbeatOk = this.ctx.clock.now();
    this.stopHeartbeat = this.ctx.clock.every(this.ctx.opts.heartbeatIntervalMs, () => {
      void this.beat(sessionId);
    });
  }

  /** One heartbeat: no retries, short timeout; failures only count towards the warning. */
  async beat(sessionId: string): Promise<void> {
    if (this.heartbeatInFlight) return;
    this.heartbeatInFlight = true;
    let failure: string | undefined;
    try {
      const res = await this.ctx.transport.send({
        method: "POST",
        path: "/api/v1/session_heartbeat",
        json: { session_id: sessionId, type: "session_heartbeat" },
        timeoutMs: HEARTBEAT_TIMEOUT_MS,
      });
      if (res.status >= 400) failure = `HTTP ${res.status}`;
    } catch (err) {
      failure = (err as Error).message;
    } finally {
      this.heartbeatInFlight = false;
    }
    const now = this.ctx.clock.now();
    if (failure === undefined) {
      this.lastHeartbeatOk = now;
      this.warned = false;
      return;
    }
    if (!this.warned && now - this.lastHeartbeatOk >= HEARTBEAT_WARN_AFTER_MS) {
      this.warned = true;
      this.ctx.logger.warn(
        this.ctx.transport.redact(
          `session heartbeats have failed for ${Math.round((now - this.lastHeartbeatOk) / 1000)} s (last: ${failure}); the server may terminate the session`,
        ),
      );
    }
  }

  /** One heartbeat (or, before the session exists, a health check) that tells whether the server still knows us. */
  async probe(): Promise<ServerProbe> {
    const pending = this.sessionId;
    let sessionId: string | undefined;
    try {
      sessionId = pending === undefined ? undefined : await pending;
    } catch {
      sessionId = undefined;
    }
    const req =
      sessionId === undefined
        ? { method: "GET" as const, path: "/api/v1/healthz", timeoutMs: HEARTBEAT_TIMEOUT_MS }
        : {
            method: "POST" as const,
            path: "/api/v1/session_heartbeat",
            json: { session_id: sessionId, type: "session_heartbeat" },
            timeoutMs: HEARTBEAT_TIMEOUT_MS,
          };
    try {
      const res = await this.ctx.transport.send(req);
      if (sessionId !== undefined && res.status === 404) return "session_lost";
      // A 5xx or a proxy's 502 while the server behind it starts is not an answer from it yet.
      return res.status >= 500 ? "unreachable" : "alive";
    } catch (err) {
      if (err instanceof APIConnectionError) return "unreachable";
      throw err;
    }
  }

  close(): void {
    this.stopHeartbeat?.();
    this.stopHeartbeat = undefined;
  }
}
