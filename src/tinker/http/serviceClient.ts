// ServiceClient over HTTP: the entry point for a hosted Tinker service or a Tinker-compatible
// server. The session is created lazily, on first training or sampling use (REST needs none).
import type { CreateLoraTrainingClientOptions, SamplingClient, ServerProbe, ServiceClient, TrainingClient } from "../clients.ts";
import { InvalidArgumentError } from "../errors.ts";
import { isValidLoraRank, LORA_RANK_RULE } from "../loraRank.ts";
import { isTinkerPath } from "../paths.ts";
import {
  CreateModelResponseSchema,
  CreateSamplingSessionResponseSchema,
  LoraConfigSchema,
  ServerCapabilitiesSchema,
  type ServerCapabilities,
} from "../types.ts";
import { systemClock } from "./clock.ts";
import { HttpContext, parseResponse } from "./context.ts";
import { resolveHttpOptions, type HttpClientOptions } from "./options.ts";
import { HttpRestClient } from "./restClient.ts";
import { HttpSamplingClient } from "./samplingClient.ts";
import { Semaphore } from "../../async/concurrency.ts";
import { HttpSession } from "./session.ts";
import { HttpTrainingClient, submitFutureRequest, withOptional, type SamplerFactory } from "./trainingClient.ts";

export class HttpServiceClient implements ServiceClient, SamplerFactory {
  readonly engineKind = "remote" as const;
  readonly ctx: HttpContext;
  private readonly session: HttpSession;
  private readonly rest: HttpRestClient;
  private readonly sampleSemaphore: Semaphore;

  constructor(options: HttpClientOptions = {}) {
    this.ctx = new HttpContext(resolveHttpOptions(options, options.clock ?? systemClock));
    this.session = new HttpSession(this.ctx);
    this.rest = new HttpRestClient(this.ctx);
    this.sampleSemaphore = new Semaphore(() => this.ctx.flags.sampleMaxConcurrentRequests);
  }

  probeServer(): Promise<ServerProbe> {
    return this.session.probe();
  }

  get baseUrl(): string {
    return this.ctx.opts.baseUrl;
  }

  getServerCapabilities(): Promise<ServerCapabilities> {
    return this.ctx.call({ method: "GET", path: "/api/v1/get_server_capabilities" }, ServerCapabilitiesSchema);
  }

  async createLoraTrainingClient(baseModel: string, options: CreateLoraTrainingClientOptions = {}): Promise<TrainingClient> {
    const trainMlp = options.trainMlp ?? true;
    const trainAttn = options.trainAttn ?? true;
    const trainUnembed = options.trainUnembed ?? true;
    if (!trainMlp && !trainAttn && !trainUnembed) {
      throw new InvalidArgumentError("createLoraTrainingClient: at least one of trainMlp, trainAttn, trainUnembed must be true");
    }
    const rank = options.rank ?? 32;
    if (!isValidLoraRank(rank)) {
      throw new InvalidArgumentError(`createLoraTrainingClient: rank is ${rank}; expected ${LORA_RANK_RULE}`);
    }
    const loraConfig = LoraConfigSchema.parse(
      withOptional({ rank, train_mlp: trainMlp, train_attn: trainAttn, train_unembed: trainUnembed }, { seed: options.seed }),
    );
    const sessionId = await this.session.id();
    const body = withOptional(
      { session_id: sessionId, model_seq_id: this.session.nextModelSeqId(), base_model: baseModel, lora_config: loraConfig, type: "create_model" },
      { user_metadata: options.userMetadata },
    );
    const req = { method: "POST" as const, path: "/api/v1/create_model", json: body, idempotencyKey: this.ctx.transport.newIdempotencyKey() };
    const requestId = await submitFutureRequest(this.ctx, req, "CreateModel");
    const { model_id } = await this.ctx.poll({
      requestId,
      parseJson: (v) => parseResponse(CreateModelResponseSchema, v, "create_model result"),
      resubmit: () => submitFutureRequest(this.ctx, req, "CreateModel"),
    });
    return new HttpTrainingClient(this.ctx, this, model_id, baseModel);
  }

  createTrainingClientFromState(path: string, options: { userMetadata?: Record<string, string> } = {}): Promise<TrainingClient> {
    return this.fromState(path, false, options.userMetadata);
  }

  createTrainingClientFromStateWithOptimizer(path: string, options: { userMetadata?: Record<string, string> } = {}): Promise<TrainingClient> {
    return this.fromState(path, true, options.userMetadata);
  }

  async createSamplingClient(options: { modelPath?: string; baseModel?: string }): Promise<SamplingClient> {
    const { modelPath, baseModel } = options;
    if (modelPath === undefined && baseModel === undefined) {
      throw new InvalidArgumentError("createSamplingClient: pass modelPath (a tinker:// path) or baseModel");
    }
    if (modelPath !== undefined && !isTinkerPath(modelPath)) {
      throw new InvalidArgumentError(`createSamplingClient: modelPath ${JSON.stringify(modelPath)} must start with tinker://`);
    }
    const sessionId = await this.session.id();
    const res = await this.ctx.call(
      {
        method: "POST",
        path: "/api/v1/create_sampling_session",
        json: withOptional(
          { session_id: sessionId, sampling_session_seq_id: this.session.nextSamplingSessionSeqId(), type: "create_sampling_session" },
          { base_model: baseModel, model_path: modelPath },
        ),
      },
      CreateSamplingSessionResponseSchema,
    );
    let resolvedBase = baseModel;
    try {
      resolvedBase = (await this.rest.getSampler(res.sampling_session_id)).base_model;
    } catch (err) {
      if (resolvedBase === undefined) throw err;
    }
    return new HttpSamplingClient(this.ctx, this.sampleSemaphore, res.sampling_session_id, resolvedBase ?? "", modelPath);
  }

  samplerForSession(samplingSessionId: string, baseModel: string): SamplingClient {
    return new HttpSamplingClient(this.ctx, this.sampleSemaphore, samplingSessionId, baseModel);
  }

  nextSamplingSessionSeqId(): number {
    return this.session.nextSamplingSessionSeqId();
  }

  createRestClient(): HttpRestClient {
    return this.rest;
  }

  async close(): Promise<void> {
    this.session.close();
  }

  private async fromState(path: string, optimizer: boolean, userMetadata: Record<string, string> | undefined): Promise<TrainingClient> {
    const info = await this.rest.getWeightsInfoByTinkerPath(path);
    const client = await this.createLoraTrainingClient(
      info.base_model,
      withOptional(
        {},
        {
          rank: info.lora_rank ?? undefined,
          trainMlp: info.train_mlp ?? undefined,
          trainAttn: info.train_attn ?? undefined,
          trainUnembed: info.train_unembed ?? undefined,
          userMetadata,
        },
      ) as CreateLoraTrainingClientOptions,
    );
    const fut = optimizer ? await client.loadStateWithOptimizer(path) : await client.loadState(path);
    await fut.result();
    return client;
  }
}
