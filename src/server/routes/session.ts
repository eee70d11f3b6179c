// Service-level endpoints: health, capabilities, client flags, sessions, telemetry, and
// retrieve_future (the long poll every queued request is read back through, spec §4.5).
import type { Handler } from "../core.ts";
import { HttpError } from "../http.ts";
import { CreateSessionSchema, RetrieveFutureSchema, SessionIdSchema } from "../schemas.ts";

/**
 * Flags for SDK ≥ 0.18 (spec §4.2). Protobuf forward_backward bodies are welcome (smaller and much
 * faster to parse than JSON number arrays), forward-only passes go the same way, and chunks may
 * arrive in parallel because the sequencer orders them. No JWT exchange, no zstd.
 */
export const CLIENT_FLAGS = {
  pjwt_auth_enabled: false,
  credential_default_source: "api_key",
  parallel_fwdbwd_chunks: true,
  proto_write_fwdbwd: true,
  proto_compress_fwdbwd: false,
  fwd_via_fwdbwd: true,
  fwdbwd_max_chunk_len: 1024,
  fwdbwd_max_chunk_bytes_count: 5_000_000,
  sample_max_concurrent_requests: 64,
  create_model_via_load_weights: false,
};

export const healthz: Handler = () => ({ json: { status: "ok" } });

export const capabilities: Handler = async (core) => ({ json: core.features.capabilities(await core.service.getServerCapabilities()) });

export const clientConfig: Handler = () => ({ json: CLIENT_FLAGS });

export const dynamicConfig: Handler = () => ({ json: { refresh_interval_sec: 300 } });

export const createSession: Handler = (core, call) => {
  core.parse(call, CreateSessionSchema);
  const s = core.registry.createSession();
  return { json: { session_id: s.id, type: "create_session" } };
};

export const heartbeat: Handler = (core, call) => {
  const body = core.parse(call, SessionIdSchema);
  core.registry.session(body.session_id);
  return { json: { type: "session_heartbeat" } };
};

/** `GET /api/v1/sessions?limit&offset`: the live sessions' ids, newest first. */
export const listSessions: Handler = (core, call) => {
  const q = (key: string, fallback: number): number => {
    const raw = call.url.searchParams.get(key);
    const n = raw === null ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new HttpError(400, `query parameter ${key}=${JSON.stringify(raw)} is invalid; expected a non-negative integer`);
    return n;
  };
  const limit = q("limit", 20);
  const offset = q("offset", 0);
  const ids = [...core.registry.sessions.values()].sort((a, b) => b.createdAt - a.createdAt).map((s) => s.id);
  return { json: { sessions: ids.slice(offset, offset + limit), cursor: { offset, limit, total_count: ids.length } } };
};

export const getSession: Handler = (core, call) => {
  const s = core.registry.session(call.params[0]!);
  return { json: { training_run_ids: [...s.modelIds], sampler_ids: [...s.samplerIds] } };
};

export const telemetry: Handler = () => ({ json: { status: "accepted" } });

const PROTOBUF = "application/x-protobuf";

export const retrieveFuture: Handler = async (core, call) => {
  const body = core.parse(call, RetrieveFutureSchema);
  const outcome = await core.futures.wait(body.request_id, core.options.longPollSec * 1000, call.signal);
  if (outcome === null) throw new HttpError(404, `request_id ${JSON.stringify(body.request_id)} is unknown (or its result expired)`);
  if (outcome === undefined) {
    throw new HttpError(408, { detail: `request ${body.request_id} is still running; poll again`, queue_state: "active" });
  }
  if (!outcome.ok) return { json: { error: outcome.error, category: outcome.category } };
  const accept = String(call.req.headers["accept"] ?? "").toLowerCase();
  if (outcome.proto !== undefined && accept.includes(PROTOBUF)) return { bytes: outcome.proto(), contentType: PROTOBUF };
  return { json: outcome.json };
};
