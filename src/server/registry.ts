// What the server holds between requests: sessions, their live models and samplers, and the
// heartbeat expiry that unloads a silent session's models (docs/protocol.md#session-bootstrap-and-heartbeat: 300 s by default).
import { randomBytes } from "node:crypto";
import type { EmbeddedServiceClient, EmbeddedTrainingClient } from "../engine/index.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { HttpError } from "./http.ts";
import { DEFAULT_GAP_TIMEOUT_MS, ModelSequencer } from "./sequencer.ts";

export interface SessionEntry {
  id: string;
  createdAt: number;
  lastSeen: number;
  modelIds: Set<string>;
  samplerIds: Set<string>;
  /** model_seq_id → the create_model request (digest, request id, and model id once created). */
  createdModels: Map<number, { digest: string; requestId: string }>;
  /** sampling_session_seq_id → sampler id, so a repeated create_sampling_session is idempotent. */
  samplingSeqs: Map<number, { digest: string; samplerId: string }>;
}

export interface ModelEntry {
  id: string;
  sessionId: string;
  baseModel: string;
  training: EmbeddedTrainingClient;
  seq: ModelSequencer;
}

export interface SamplerEntry {
  id: string;
  sessionId: string | undefined;
  client: SamplingClient;
  baseModel: string;
  modelPath: string | undefined;
  /** seq_id → (digest, request id) of recent sample requests, for idempotent retries. */
  recent: Map<number, { digest: string; requestId: string }>;
  lastUsed: number;
}

/** Frees a sampler's engine memory when the engine offers a way to (EmbeddedSamplingClient does). */
function release(client: SamplingClient): void {
  const r = (client as Partial<{ release(): Promise<void> }>).release;
  if (typeof r === "function") void r.call(client).catch(() => undefined);
}

const RECENT_SAMPLES = 1024;

export class Registry {
  readonly sessions = new Map<string, SessionEntry>();
  readonly models = new Map<string, ModelEntry>();
  readonly samplers = new Map<string, SamplerEntry>();
  private readonly sessionlessSamplerIds = new Set<string>();

  constructor(
    readonly service: EmbeddedServiceClient,
    private readonly sessionTimeoutMs: number,
    private readonly log: (line: string) => void,
    /** Clients make a new sampler per step and never say when they drop the old one, so each session keeps its most recently used ones. */
    private readonly maxSamplersPerSession = 64,
    private readonly seqGapTimeoutMs = DEFAULT_GAP_TIMEOUT_MS,
  ) {}

  createSession(): SessionEntry {
    const s: SessionEntry = {
      id: `session-${randomBytes(8).toString("hex")}`,
      createdAt: Date.now(),
      lastSeen: Date.now(),
      modelIds: new Set(),
      samplerIds: new Set(),
      createdModels: new Map(),
      samplingSeqs: new Map(),
    };
    this.sessions.set(s.id, s);
    return s;
  }

  session(id: string): SessionEntry {
    const s = this.sessions.get(id);
    if (s === undefined)
      throw new HttpError(
        404,
        `session ${JSON.stringify(id)} not found (it may have expired after ${this.sessionTimeoutMs / 1000} s without a heartbeat); create a new service client`,
      );
    s.lastSeen = Date.now();
    return s;
  }

  model(id: string): ModelEntry {
    const m = this.models.get(id);
    if (m === undefined)
      throw new HttpError(404, `model ${JSON.stringify(id)} not found or no longer loaded; create a training client (or one from saved state)`);
    const s = this.sessions.get(m.sessionId);
    if (s !== undefined) s.lastSeen = Date.now();
    return m;
  }

  sampler(id: string): SamplerEntry {
    const e = this.samplers.get(id);
    if (e === undefined) throw new HttpError(404, `sampling session ${JSON.stringify(id)} not found or expired; create a new sampling client`);
    e.lastUsed = Date.now();
    if (e.sessionId !== undefined) {
      const s = this.sessions.get(e.sessionId);
      if (s !== undefined) s.lastSeen = e.lastUsed;
    }
    return e;
  }

  addModel(sessionId: string, training: EmbeddedTrainingClient): ModelEntry | undefined {
    const s = this.sessions.get(sessionId);
    if (s === undefined) {
      // The session expired while the model was being built: nobody can use it.
      void training.unload().catch(() => undefined);
      return undefined;
    }
    const m: ModelEntry = {
      id: training.modelId,
      sessionId,
      baseModel: training.baseModel,
      training,
      seq: new ModelSequencer(`model ${training.modelId}`, this.seqGapTimeoutMs),
    };
    this.models.set(m.id, m);
    s.modelIds.add(m.id);
    return m;
  }

  addSampler(sessionId: string | undefined, client: SamplingClient): SamplerEntry {
    const e: SamplerEntry = {
      id: `sampler-${randomBytes(8).toString("hex")}`,
      sessionId,
      client,
      baseModel: client.baseModel,
      modelPath: client.modelPath,
      recent: new Map(),
      lastUsed: Date.now(),
    };
    this.samplers.set(e.id, e);
    const owned = sessionId === undefined ? this.sessionlessSamplerIds : this.sessions.get(sessionId)?.samplerIds;
    if (owned !== undefined) {
      owned.add(e.id);
      while (owned.size > this.maxSamplersPerSession) {
        let oldest: SamplerEntry | undefined;
        for (const id of owned) {
          const c = this.samplers.get(id);
          if (c !== undefined && c !== e && (oldest === undefined || c.lastUsed < oldest.lastUsed)) oldest = c;
        }
        if (oldest === undefined) break;
        this.dropSampler(oldest.id);
      }
    }
    return e;
  }

  dropSampler(id: string): void {
    const e = this.samplers.get(id);
    if (e === undefined) return;
    this.samplers.delete(id);
    (e.sessionId === undefined ? this.sessionlessSamplerIds : this.sessions.get(e.sessionId)?.samplerIds)?.delete(id);
    release(e.client);
  }

  rememberSample(e: SamplerEntry, seqId: number, digest: string, requestId: string): void {
    e.recent.set(seqId, { digest, requestId });
    if (e.recent.size > RECENT_SAMPLES) e.recent.delete(e.recent.keys().next().value as number);
  }

  /** Stops accepting requests for the model and frees it once what was submitted has run. */
  unloadModel(id: string, reason: string): Promise<void> {
    const m = this.models.get(id);
    if (m === undefined) return Promise.resolve();
    this.models.delete(id);
    this.sessions.get(m.sessionId)?.modelIds.delete(id);
    m.seq.close(reason);
    return m.seq
      .after(() => m.training.unload())
      .catch((err: unknown) => {
        this.log(`unloading ${id} failed: ${(err as Error).message}`);
      });
  }

  /** Expires sessions that have been silent longer than the timeout. */
  expireSessions(now = Date.now()): void {
    for (const s of [...this.sessions.values()]) {
      if (now - s.lastSeen <= this.sessionTimeoutMs) continue;
      this.sessions.delete(s.id);
      for (const id of s.modelIds) void this.unloadModel(id, `its session ${s.id} expired without heartbeats`);
      for (const id of [...s.samplerIds]) this.dropSampler(id);
      this.log(`session ${s.id} expired (${s.modelIds.size} model(s) unloaded)`);
    }
  }
}
