// Training endpoints (spec §4.4): create_model, get_info, unload_model, forward(_backward),
// optim_step, save/load weights and save_weights_for_sampler. All but get_info answer with a
// future ({request_id, model_id}) whose result retrieve_future returns.
import type { z } from "zod";
import type { TinkerFuture } from "../../tinker/clients.ts";
import { InvalidArgumentError } from "../../tinker/errors.ts";
import { decodeForwardBackwardRequest, encodeForwardBackwardOutput } from "../../tinker/http/proto/messages.ts";
import { validateCheckpointName } from "../../tinker/paths.ts";
import { modelInputLength } from "../sampleCost.ts";
import { LossFnNameSchema, type Datum, type ForwardBackwardOutput, type LossFnName } from "../../tinker/types.ts";
import type { Call, Handler, Reply, ServerCore, Submit } from "../core.ts";
import { zodDetail } from "../errors.ts";
import type { FinishedValue } from "../futures.ts";
import { HttpError, parseJsonBody } from "../http.ts";
import { checkTinkerPath } from "../ids.ts";
import type { ModelEntry } from "../registry.ts";
import {
  CreateModelSchema,
  ForwardBackwardSchema,
  ForwardSchema,
  LoadWeightsSchema,
  ModelIdSchema,
  OptimStepSchema,
  SaveWeightsForSamplerSchema,
  SaveWeightsSchema,
} from "../schemas.ts";

const PROTOBUF = "application/x-protobuf";

/**
 * Parses a model request. When the shape is wrong but the model and seq_id can be read, the
 * seq_id is consumed by a failed future so the model's later requests still run.
 */
function parseModelRequest<S extends z.ZodType>(core: ServerCore, call: Call, schema: S): { body: z.output<S>; m: ModelEntry } {
  let raw: unknown;
  try {
    raw = parseJsonBody(call.body);
  } catch (err) {
    consumeUnreadableSeq(core, call, err);
    throw err;
  }
  const r = schema.safeParse(raw);
  if (r.success) {
    const body = r.data as { model_id: string };
    return { body: r.data, m: core.registry.model(body.model_id) };
  }
  const detail = zodDetail(r.error);
  const obj = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  const modelId = obj["model_id"];
  const seqId = obj["seq_id"];
  if (typeof modelId === "string" && Number.isSafeInteger(seqId) && core.registry.models.has(modelId)) {
    core.enqueue(core.registry.model(modelId), seqId as number, core.digest(call), () => {
      throw new HttpError(422, detail);
    });
  }
  throw new HttpError(422, detail);
}

/**
 * A body that is not valid JSON still usually shows its model_id and seq_id as plain text (a
 * truncated upload, a stray byte in the data). When both can be read, the seq_id is consumed by a
 * failed future at once, so the model's later requests need not wait for the gap timeout.
 */
function consumeUnreadableSeq(core: ServerCore, call: Call, err: unknown): void {
  if (call.body.length === 0) return;
  const text = call.body.toString("utf8");
  const modelIds = [...text.matchAll(/"model_id"\s*:\s*"([^"\\]{1,200})"/g)].map((m) => m[1]!);
  const seqIds = [...text.matchAll(/"seq_id"\s*:\s*(\d{1,15})\b/g)].map((m) => Number(m[1]));
  if (modelIds.length !== 1 || seqIds.length !== 1 || !core.registry.models.has(modelIds[0]!)) return;
  try {
    core.enqueue(core.registry.model(modelIds[0]!), seqIds[0], core.digest(call), () => {
      throw err;
    });
  } catch {
    // The answer to this request is the JSON error either way.
  }
}

function futureReply(f: { request_id: string; model_id?: string }): Reply {
  return { json: f };
}

function fbResult(fut: Promise<TinkerFuture<ForwardBackwardOutput>>): Promise<{ done: Promise<FinishedValue> }> {
  return fut.then((f) => ({
    done: f.result().then((out) => ({ json: out, proto: () => encodeForwardBackwardOutput(out) })),
  }));
}

function jsonResult<T>(fut: Promise<TinkerFuture<T>>, shape: (v: T) => unknown): Promise<{ done: Promise<FinishedValue> }> {
  return fut.then((f) => ({ done: f.result().then((v) => ({ json: shape(v) })) }));
}

export const createModel: Handler = (core, call) => {
  const body = core.parse(call, CreateModelSchema);
  const session = core.registry.session(body.session_id);
  const digest = core.digest(call);
  const prior = session.createdModels.get(body.model_seq_id);
  if (prior !== undefined) {
    if (prior.digest === digest) return futureReply({ request_id: prior.requestId });
    throw new HttpError(409, `model_seq_id ${body.model_seq_id} of session ${session.id} was already used for a different create_model request`);
  }
  const lora = body.lora_config ?? { rank: 32, train_mlp: true, train_attn: true, train_unembed: true };
  core.features.checkModel(body.base_model);
  core.features.checkLoraRank(lora.rank);
  const requestId = core.detached(async () => {
    const training = await core.service.createLoraTrainingClient(body.base_model, {
      rank: lora.rank,
      seed: lora.seed,
      trainMlp: lora.train_mlp,
      trainAttn: lora.train_attn,
      trainUnembed: lora.train_unembed,
      userMetadata: body.user_metadata ?? undefined,
    });
    const m = core.registry.addModel(session.id, training);
    if (m === undefined) throw new HttpError(404, `session ${session.id} expired while the model was being created`);
    core.log(`model ${m.id} created (${body.base_model}, LoRA rank ${lora.rank}) in ${session.id}`);
    return { json: { model_id: m.id, type: "create_model" } };
  });
  session.createdModels.set(body.model_seq_id, { digest, requestId });
  return futureReply({ request_id: requestId });
};

export const getInfo: Handler = async (core, call) => {
  const body = core.parse(call, ModelIdSchema);
  return { json: await core.registry.model(body.model_id).training.getInfo() };
};

export const unloadModel: Handler = (core, call) => {
  const body = core.parse(call, ModelIdSchema);
  const m = core.registry.model(body.model_id);
  const requestId = core.detached(async () => {
    await core.registry.unloadModel(m.id, "it was unloaded");
    return { json: { model_id: m.id, type: "unload_model" } };
  });
  return futureReply({ request_id: requestId, model_id: m.id });
};

function checkLossFn(name: string): LossFnName {
  const r = LossFnNameSchema.safeParse(name);
  if (!r.success) throw new HttpError(422, `loss_fn ${JSON.stringify(name)} is not supported; expected one of ${LossFnNameSchema.options.join(", ")}`);
  return r.data;
}

function fwdbwd(
  core: ServerCore,
  call: Call,
  m: ModelEntry,
  seqId: number | undefined,
  data: Datum[],
  lossFn: LossFnName,
  config: Record<string, number> | undefined,
  forwardOnly: boolean,
): Reply {
  const submit: Submit = () => fbResult(forwardOnly ? m.training.forward(data, lossFn, config) : m.training.forwardBackward(data, lossFn, config));
  const tokens = data.reduce((n, d) => n + modelInputLength(d.model_input), 0);
  return futureReply(core.enqueue(m, seqId, core.digest(call), () => submit, tokens));
}

export const forwardBackward: Handler = (core, call) => {
  const type = String(call.req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith(PROTOBUF)) {
    let decoded: ReturnType<typeof decodeForwardBackwardRequest>;
    try {
      decoded = decodeForwardBackwardRequest(call.body);
    } catch (err) {
      throw new HttpError(400, (err as Error).message);
    }
    const m = core.registry.model(decoded.modelId);
    let lossFn: LossFnName;
    try {
      lossFn = checkLossFn(decoded.lossFn);
      if (decoded.data.length === 0) throw new HttpError(422, "data must hold at least one datum");
    } catch (err) {
      core.enqueue(m, decoded.seqId, core.digest(call), () => {
        throw err;
      });
      throw err;
    }
    return fwdbwd(core, call, m, decoded.seqId, decoded.data, lossFn, decoded.lossFnConfig, decoded.forwardOnly);
  }
  const { body, m } = parseModelRequest(core, call, ForwardBackwardSchema);
  const input = body.forward_backward_input;
  return fwdbwd(core, call, m, body.seq_id, input.data, input.loss_fn, input.loss_fn_config ?? undefined, false);
};

export const forward: Handler = (core, call) => {
  const { body, m } = parseModelRequest(core, call, ForwardSchema);
  const input = body.forward_input;
  return fwdbwd(core, call, m, body.seq_id, input.data, input.loss_fn, input.loss_fn_config ?? undefined, true);
};

export const optimStep: Handler = (core, call) => {
  const { body, m } = parseModelRequest(core, call, OptimStepSchema);
  return futureReply(core.enqueue(m, body.seq_id, core.digest(call), () => () => jsonResult(m.training.optimStep(body.adam_params), (r) => r)));
};

export const saveWeights: Handler = (core, call) => {
  const { body, m } = parseModelRequest(core, call, SaveWeightsSchema);
  return futureReply(
    core.enqueue(m, body.seq_id, core.digest(call), () => {
      const name = validateCheckpointName(body.path ?? `checkpoint-${body.seq_id ?? Date.now()}`);
      const options = { overwrite: body.overwrite ?? false, ttlSeconds: body.ttl_seconds ?? undefined };
      return () => jsonResult(m.training.saveState(name, options), (r) => ({ path: r.path, type: "save_weights" }));
    }),
  );
};

export const loadWeights: Handler = (core, call) => {
  const { body, m } = parseModelRequest(core, call, LoadWeightsSchema);
  return futureReply(
    core.enqueue(m, body.seq_id, core.digest(call), () => {
      const p = checkTinkerPath(body.path);
      if (p.kind !== "weights") {
        throw new InvalidArgumentError(`cannot load training state from ${JSON.stringify(body.path)}: expected a tinker://<model_id>/weights/<name> path`);
      }
      const optimizer = body.optimizer ?? false;
      return () =>
        jsonResult(optimizer ? m.training.loadStateWithOptimizer(body.path) : m.training.loadState(body.path), (r) => ({
          path: r.path ?? body.path,
          model_id: m.id,
          type: "load_weights",
        }));
    }),
  );
};

export const saveWeightsForSampler: Handler = (core, call) => {
  const { body, m } = parseModelRequest(core, call, SaveWeightsForSamplerSchema);
  return futureReply(
    core.enqueue(m, body.seq_id, core.digest(call), () => {
      if (body.path !== undefined && body.path !== null) {
        const name = validateCheckpointName(body.path);
        const options = { ttlSeconds: body.ttl_seconds ?? undefined };
        return () => jsonResult(m.training.saveWeightsForSampler(name, options), (r) => ({ path: r.path, type: "save_weights_for_sampler" }));
      }
      if (body.sampling_session_seq_id === undefined || body.sampling_session_seq_id === null) {
        throw new HttpError(422, "save_weights_for_sampler needs a path (a checkpoint name) or a sampling_session_seq_id (an ephemeral sampler)");
      }
      // The snapshot must be taken before the model's next request runs, so this submission step
      // lasts until the sampler exists.
      return async () => {
        const client = await m.training.saveWeightsAndGetSamplingClient();
        const e = core.registry.addSampler(m.sessionId, client);
        return { done: Promise.resolve({ json: { sampling_session_id: e.id, type: "save_weights_for_sampler" } }) };
      };
    }),
  );
};
