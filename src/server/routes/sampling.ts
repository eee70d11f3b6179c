// Sampling endpoints: create_sampling_session, asample (a future), GET samplers/{id}.
import type { SamplingClient } from "../../tinker/clients.ts";
import { isTinkerPath } from "../../tinker/paths.ts";
import { encodeSampleResponse } from "../../tinker/http/proto/messages.ts";
import type { Handler } from "../core.ts";
import { toHttpError } from "../errors.ts";
import { HttpError } from "../http.ts";
import { checkTinkerPath } from "../ids.ts";
import { sampleCost } from "../sampleCost.ts";
import type { SamplerEntry } from "../registry.ts";
import { CreateSamplingSessionSchema, SampleSchema } from "../schemas.ts";

async function newSampler(core: Parameters<Handler>[0], modelPath: string | undefined, baseModel: string | undefined): Promise<SamplingClient> {
  if (modelPath === undefined && baseModel === undefined) throw new HttpError(422, "pass model_path (a tinker:// path) or base_model");
  if (modelPath === undefined && baseModel !== undefined) core.features.checkModel(baseModel);
  if (modelPath !== undefined) {
    if (!isTinkerPath(modelPath)) throw new HttpError(400, `model_path ${JSON.stringify(modelPath)} must start with tinker://`);
    try {
      checkTinkerPath(modelPath);
    } catch (err) {
      throw new HttpError(400, (err as Error).message);
    }
  }
  try {
    return await core.service.createSamplingClient({ modelPath, baseModel });
  } catch (err) {
    throw toHttpError(err);
  }
}

export const createSamplingSession: Handler = async (core, call) => {
  const body = core.parse(call, CreateSamplingSessionSchema);
  const session = core.registry.session(body.session_id);
  const digest = core.digest(call);
  const prior = session.samplingSeqs.get(body.sampling_session_seq_id);
  if (prior !== undefined) {
    if (prior.digest === digest) return { json: { sampling_session_id: prior.samplerId } };
    throw new HttpError(409, `sampling_session_seq_id ${body.sampling_session_seq_id} of session ${session.id} was already used`);
  }
  const client = await newSampler(core, body.model_path ?? undefined, body.base_model ?? undefined);
  const e = core.registry.addSampler(session.id, client);
  session.samplingSeqs.set(body.sampling_session_seq_id, { digest, samplerId: e.id });
  return { json: { sampling_session_id: e.id } };
};

export const getSampler: Handler = (core, call) => {
  const e = core.registry.sampler(call.params[0]!);
  return { json: { sampler_id: e.id, base_model: e.baseModel, model_path: e.modelPath ?? null } };
};

export const asample: Handler = async (core, call) => {
  const body = core.parse(call, SampleSchema);
  core.features.checkTopk(body.topk_prompt_logprobs);
  let e: SamplerEntry;
  if (body.sampling_session_id) {
    e = core.registry.sampler(body.sampling_session_id);
  } else {
    // Session-less requests (SDK ≤ 0.2 sends model_path / base_model directly) share one sampler per target.
    const path = body.model_path ?? undefined;
    const cached = [...core.registry.samplers.values()].find(
      (s) => s.sessionId === undefined && (path !== undefined ? s.modelPath === path : s.modelPath === undefined && s.baseModel === body.base_model),
    );
    e = cached ?? core.registry.addSampler(undefined, await newSampler(core, body.model_path ?? undefined, body.base_model ?? undefined));
  }
  const digest = core.digest(call);
  const seq = body.seq_id ?? undefined;
  if (seq !== undefined) {
    const prior = e.recent.get(seq);
    if (prior !== undefined && prior.digest === digest) return { json: { request_id: prior.requestId } };
  }
  const params = { ...body.sampling_params, stop: body.sampling_params.stop ?? undefined };
  const cost = sampleCost(body.num_samples, body.prompt, params.max_tokens, core.options.maxSampleTokens);
  const requestId = core.detached(async () => {
    const r = await core.scheduler.run(e.sessionId ?? "(no session)", cost, () =>
      e.client.sample(body.prompt, body.num_samples, params, {
        includePromptLogprobs: body.prompt_logprobs,
        topkPromptLogprobs: body.topk_prompt_logprobs,
      }),
    );
    const out = { ...r, type: "sample" as const };
    return { json: out, proto: () => encodeSampleResponse(out) };
  });
  if (seq !== undefined) core.registry.rememberSample(e, seq, digest, requestId);
  return { json: { request_id: requestId } };
};
