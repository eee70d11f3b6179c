// TrainingClient over HTTP: every request gets the model's next seq_id and is submitted in order;
// the returned future polls retrieve_future in the background (docs/protocol.md#training-client-and-chunking, docs/protocol.md#pipelining).
import type { z } from "zod";
import type { CustomLossFn, SamplingClient, TinkerFuture, TrainingClient } from "../clients.ts";
import { forwardBackwardCustom } from "../customLoss.ts";
import { validateData } from "../datum.ts";
import { InvalidArgumentError, TinkerError } from "../errors.ts";
import { combineFutures, futureFromPromise, OrderedSubmitter } from "../futures.ts";
import { combineForwardBackwardOutputs } from "../metrics.ts";
import { parseTinkerPath, validateCheckpointName } from "../paths.ts";
import {
  AdamParamsSchema,
  ForwardBackwardOutputSchema,
  GetInfoResponseSchema,
  LoadWeightsResponseSchema,
  OptimStepResponseSchema,
  SaveWeightsForSamplerResponseSchema,
  SaveWeightsResponseSchema,
  UntypedFutureSchema,
  type AdamParams,
  type Datum,
  type ForwardBackwardOutput,
  type GetInfoResponse,
  type LoadWeightsResponse,
  type LossFnName,
  type OptimStepResponse,
  type SaveWeightsResponse,
} from "../types.ts";
import { splitIntoChunks } from "./chunking.ts";
import { parseResponse, type HttpContext } from "./context.ts";
import { decodeForwardBackwardOutput, encodeForwardBackwardRequest, PROTOBUF_CONTENT_TYPE } from "./proto/messages.ts";
import type { HttpRequest } from "./transport.ts";

/** What a training client needs from its service client to make samplers. */
export interface SamplerFactory {
  createSamplingClient(options: { modelPath?: string; baseModel?: string }): Promise<SamplingClient>;
  samplerForSession(samplingSessionId: string, baseModel: string): SamplingClient;
  nextSamplingSessionSeqId(): number;
}

/** Submits a future-returning request and returns its request_id (used for resubmits too). */
export async function submitFutureRequest(ctx: HttpContext, req: HttpRequest, requestType: string): Promise<string> {
  const res = await ctx.call({ ...req, headers: { ...req.headers, "X-Tinker-Request-Type": requestType } }, UntypedFutureSchema);
  return res.request_id;
}

export class HttpTrainingClient implements TrainingClient {
  private readonly submitter = new OrderedSubmitter(1);

  constructor(
    private readonly ctx: HttpContext,
    private readonly samplers: SamplerFactory,
    readonly modelId: string,
    readonly baseModel: string,
  ) {}

  forward(data: Datum[], lossFn: LossFnName, lossFnConfig?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return this.fwdbwd(data, lossFn, lossFnConfig, true);
  }

  forwardBackward(data: Datum[], lossFn: LossFnName, lossFnConfig?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return this.fwdbwd(data, lossFn, lossFnConfig, false);
  }

  forwardBackwardCustom(data: Datum[], lossFn: CustomLossFn): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return forwardBackwardCustom(this, data, lossFn);
  }

  async optimStep(adamParams: AdamParams): Promise<TinkerFuture<OptimStepResponse>> {
    const parsed = AdamParamsSchema.safeParse(adamParams);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
      throw new InvalidArgumentError(`optimStep: invalid adam params (${issues})`);
    }
    return this.op("/api/v1/optim_step", "OptimStep", OptimStepResponseSchema, (seq) => ({
      adam_params: parsed.data,
      model_id: this.modelId,
      seq_id: seq,
      type: "optim_step",
    }));
  }

  async saveState(name: string, options: { ttlSeconds?: number; overwrite?: boolean } = {}): Promise<TinkerFuture<SaveWeightsResponse>> {
    validateCheckpointName(name);
    return this.op("/api/v1/save_weights", "SaveWeights", SaveWeightsResponseSchema, (seq) =>
      withOptional(
        { model_id: this.modelId, path: name, seq_id: seq, overwrite: options.overwrite ?? false, type: "save_weights" },
        {
          ttl_seconds: options.ttlSeconds,
        },
      ),
    );
  }

  loadState(path: string): Promise<TinkerFuture<LoadWeightsResponse>> {
    return this.load(path, false);
  }

  loadStateWithOptimizer(path: string): Promise<TinkerFuture<LoadWeightsResponse>> {
    return this.load(path, true);
  }

  async saveWeightsForSampler(name: string, options: { ttlSeconds?: number } = {}): Promise<TinkerFuture<SaveWeightsResponse>> {
    validateCheckpointName(name);
    const fut = await this.op("/api/v1/save_weights_for_sampler", "SaveWeightsForSampler", SaveWeightsForSamplerResponseSchema, (seq) =>
      withOptional({ model_id: this.modelId, path: name, seq_id: seq, type: "save_weights_for_sampler" }, { ttl_seconds: options.ttlSeconds }),
    );
    return futureFromPromise(
      fut.result().then((r) => {
        if (r.path === undefined) throw new TinkerError(`save_weights_for_sampler("${name}") returned no path`);
        return { path: r.path };
      }),
    );
  }

  async saveWeightsAndGetSamplingClient(): Promise<SamplingClient> {
    const samplingSeq = this.samplers.nextSamplingSessionSeqId();
    const fut = await this.op("/api/v1/save_weights_for_sampler", "SaveWeightsForSampler", SaveWeightsForSamplerResponseSchema, (seq) => ({
      model_id: this.modelId,
      seq_id: seq,
      sampling_session_seq_id: samplingSeq,
      type: "save_weights_for_sampler",
    }));
    const res = await fut.result();
    if (res.sampling_session_id === undefined) {
      throw new TinkerError("save_weights_for_sampler without a name returned no sampling_session_id; the server may not support ephemeral samplers");
    }
    return this.samplers.samplerForSession(res.sampling_session_id, this.baseModel);
  }

  createSamplingClient(modelPath: string): Promise<SamplingClient> {
    return this.samplers.createSamplingClient({ modelPath });
  }

  async getInfo(): Promise<GetInfoResponse> {
    const info = await this.ctx.call({ method: "POST", path: "/api/v1/get_info", json: { model_id: this.modelId, type: "get_info" } }, GetInfoResponseSchema);
    const tok = info.model_data.tokenizer_id;
    // The service may tag tokenizer ids with a ":revision" suffix the tokenizer hub does not know.
    if (tok?.includes(":")) info.model_data.tokenizer_id = tok.slice(0, tok.indexOf(":"));
    return info;
  }

  private async load(path: string, optimizer: boolean): Promise<TinkerFuture<LoadWeightsResponse>> {
    const p = parseTinkerPath(path);
    if (p.kind !== "weights") {
      throw new InvalidArgumentError(
        `cannot load training state from ${JSON.stringify(path)}: expected a tinker://<model_id>/weights/<name> path (sampler weights hold no training state)`,
      );
    }
    return this.op("/api/v1/load_weights", "LoadWeights", LoadWeightsResponseSchema, (seq) => ({
      model_id: this.modelId,
      path,
      seq_id: seq,
      optimizer,
      type: "load_weights",
    }));
  }

  /** One request with one seq_id whose JSON result is parsed with `schema`. */
  private op<S extends z.ZodType>(
    path: string,
    requestType: string,
    schema: S,
    body: (seqId: number) => Record<string, unknown>,
  ): Promise<TinkerFuture<z.output<S>>> {
    return this.submitter.submit(async (seqId) => {
      const req: HttpRequest = { method: "POST", path, json: body(seqId), idempotencyKey: this.ctx.transport.newIdempotencyKey() };
      const requestId = await submitFutureRequest(this.ctx, req, requestType);
      return futureFromPromise(
        this.ctx.poll({
          requestId,
          parseJson: (v) => parseResponse(schema, v, `${path} result`),
          resubmit: () => submitFutureRequest(this.ctx, req, requestType),
        }),
      );
    });
  }

  private async fwdbwd(
    data: Datum[],
    lossFn: LossFnName,
    lossFnConfig: Record<string, number> | undefined,
    forwardOnly: boolean,
  ): Promise<TinkerFuture<ForwardBackwardOutput>> {
    if (data.length === 0) throw new InvalidArgumentError(`${forwardOnly ? "forward" : "forwardBackward"}: data is empty`);
    validateData(data);
    const flags = this.ctx.flags;
    const chunks = splitIntoChunks(data, flags.fwdbwdMaxChunkLen, flags.fwdbwdMaxChunkBytes);
    return this.submitter.submitMany(chunks.length, async (seqIds) => {
      const send = async (i: number): Promise<TinkerFuture<ForwardBackwardOutput>> => {
        const req = this.fwdbwdRequest(chunks[i]!, seqIds[i]!, lossFn, lossFnConfig, forwardOnly);
        const type = forwardOnly ? "Forward" : "ForwardBackward";
        const requestId = await submitFutureRequest(this.ctx, req, type);
        return futureFromPromise(
          this.ctx.poll({
            requestId,
            parseJson: (v) => parseResponse(ForwardBackwardOutputSchema, v, "forward_backward result"),
            decodeProto: decodeForwardBackwardOutput,
            resubmit: () => submitFutureRequest(this.ctx, req, type),
          }),
        );
      };
      let futures: TinkerFuture<ForwardBackwardOutput>[];
      if (flags.parallelFwdbwdChunks && chunks.length > 1) {
        // The server holds later seq_ids until the first arrives, so the first chunk goes last.
        const rest = chunks.slice(1).map((_, j) => send(j + 1));
        futures = await Promise.all([send(0), ...rest]);
      } else {
        futures = [];
        for (let i = 0; i < chunks.length; i++) futures.push(await send(i));
      }
      return futures.length === 1 ? futures[0]! : combineFutures(futures, combineForwardBackwardOutputs);
    });
  }

  private fwdbwdRequest(data: Datum[], seqId: number, lossFn: LossFnName, lossFnConfig: Record<string, number> | undefined, forwardOnly: boolean): HttpRequest {
    const idempotencyKey = this.ctx.transport.newIdempotencyKey();
    const proto = this.ctx.opts.protoForwardBackward ?? this.ctx.flags.protoWriteFwdbwd;
    if (proto && (!forwardOnly || this.ctx.flags.fwdViaFwdbwd || this.ctx.opts.protoForwardBackward === true)) {
      const body = encodeForwardBackwardRequest({ modelId: this.modelId, seqId, data, lossFn, lossFnConfig, forwardOnly });
      return { method: "POST", path: "/api/v1/forward_backward", body, contentType: PROTOBUF_CONTENT_TYPE, idempotencyKey };
    }
    const input = withOptional({ data, loss_fn: lossFn }, { loss_fn_config: lossFnConfig });
    if (forwardOnly) {
      return {
        method: "POST",
        path: "/api/v1/forward",
        json: { forward_input: input, model_id: this.modelId, seq_id: seqId, type: "forward" },
        idempotencyKey,
      };
    }
    return {
      method: "POST",
      path: "/api/v1/forward_backward",
      json: { forward_backward_input: input, model_id: this.modelId, seq_id: seqId, type: "forward_backward" },
      idempotencyKey,
    };
  }
}

/** Adds the entries of `optional` whose value is defined (the wire omits absent fields). */
export function withOptional(base: Record<string, unknown>, optional: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) out[k] = v;
  return out;
}
