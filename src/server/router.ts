// The endpoint table: method + path pattern → handler. Captured path segments are URL-decoded.
import type { Handler } from "./core.ts";
import { HttpError } from "./http.ts";
import * as openai from "./openai/routes.ts";
import * as rest from "./routes/rest.ts";
import * as sampling from "./routes/sampling.ts";
import * as session from "./routes/session.ts";
import * as training from "./routes/training.ts";

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

const SEG = "([^/]+)";
const r = (method: string, path: string, handler: Handler): Route => ({ method, pattern: new RegExp(`^/api/v1/${path}$`), handler });
/** The OpenAI API lives beside the Tinker one, under /v1. */
const o = (method: string, path: string, handler: Handler): Route => ({ method, pattern: new RegExp(`^/v1/${path}$`), handler });

const ROUTES: Route[] = [
  r("GET", "healthz", session.healthz),
  r("GET", "get_server_capabilities", session.capabilities),
  r("POST", "client/config", session.clientConfig),
  r("POST", "client/dynamic_config", session.dynamicConfig),
  r("POST", "create_session", session.createSession),
  r("POST", "session_heartbeat", session.heartbeat),
  r("GET", "sessions", session.listSessions),
  r("GET", `sessions/${SEG}`, session.getSession),
  r("POST", "telemetry", session.telemetry),
  r("POST", "retrieve_future", session.retrieveFuture),
  r("POST", "create_model", training.createModel),
  r("POST", "get_info", training.getInfo),
  r("POST", "unload_model", training.unloadModel),
  r("POST", "forward_backward", training.forwardBackward),
  r("POST", "forward", training.forward),
  r("POST", "optim_step", training.optimStep),
  r("POST", "save_weights", training.saveWeights),
  r("POST", "load_weights", training.loadWeights),
  r("POST", "save_weights_for_sampler", training.saveWeightsForSampler),
  r("POST", "create_sampling_session", sampling.createSamplingSession),
  r("POST", "asample", sampling.asample),
  r("GET", `samplers/${SEG}`, sampling.getSampler),
  r("POST", "weights_info", rest.weightsInfo),
  r("GET", "training_runs", rest.listTrainingRuns),
  r("GET", `training_runs/${SEG}`, rest.getTrainingRun),
  r("GET", `training_runs/${SEG}/checkpoints`, rest.listCheckpoints),
  r("GET", `models/${SEG}/checkpoints`, rest.listCheckpoints),
  r("DELETE", `training_runs/${SEG}/checkpoints/${SEG}/${SEG}`, rest.deleteCheckpoint),
  r("DELETE", `training_runs/${SEG}/checkpoints/${SEG}`, rest.deleteCheckpoint),
  r("GET", "checkpoints", rest.listUserCheckpoints),
  r("GET", `training_runs/${SEG}/checkpoints/${SEG}/${SEG}/archive`, rest.checkpointArchive),
  r("GET", `checkpoint_archives/${SEG}`, rest.downloadArchive),
  o("GET", "models", openai.listModels),
  // Model ids may be tinker:// paths, slashes and all.
  o("GET", "models/(.+)", openai.getModel),
  o("POST", "completions", openai.completions),
  o("POST", "chat/completions", openai.chatCompletions),
];

/** The handler and decoded path parameters for a request; 404 / 405 otherwise. */
export function route(method: string, pathname: string): { handler: Handler; params: string[] } {
  let pathMatched = false;
  for (const rt of ROUTES) {
    const m = rt.pattern.exec(pathname);
    if (m === null) continue;
    pathMatched = true;
    if (rt.method !== method) continue;
    let params: string[];
    try {
      params = m.slice(1).map((s) => decodeURIComponent(s));
    } catch {
      throw new HttpError(400, `malformed percent-encoding in ${JSON.stringify(pathname)}`);
    }
    return { handler: rt.handler, params };
  }
  if (pathMatched) throw new HttpError(405, `${method} is not allowed on ${pathname}`);
  throw new HttpError(404, `no such endpoint: ${method} ${pathname}`);
}
