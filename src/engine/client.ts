// The embedded engine behind the Tinker client interfaces: one compute worker per service client,
// a local checkpoint store, and models resolved from local folders, shipped fixtures or the HF
// cache. Training calls are two-step like the service's: the returned promise resolves once the
// request is queued (it is posted to the worker synchronously, so call order is run order), and
// the future's result() once the worker finished it.
import { randomBytes, randomInt } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type {
  CreateLoraTrainingClientOptions,
  CustomLossFn,
  RestClient,
  SamplingClient,
  ServiceClient,
  TinkerFuture,
  TrainingClient,
} from "../tinker/clients.ts";
import { forwardBackwardCustom } from "../tinker/customLoss.ts";
import { InvalidArgumentError, TinkerError } from "../tinker/errors.ts";
import { futureFromPromise } from "../tinker/futures.ts";
import { parseTinkerPath, validateCheckpointName } from "../tinker/paths.ts";
import {
  AdamParamsSchema,
  type AdamParams,
  type CheckpointsList,
  type Datum,
  type ForwardBackwardOutput,
  type GetInfoResponse,
  type LoadWeightsResponse,
  type LossFnName,
  type OptimStepResponse,
  type SaveWeightsResponse,
  type ServerCapabilities,
  type TrainingRun,
  type TrainingRunsList,
  type WeightsInfo,
} from "../tinker/types.ts";
import { CHECKPOINT_MODEL_TYPES, type ModelConfig } from "./model/config.ts";
import type { TrainableSetup } from "./model/model.ts";
import { datumsToBatch, toForwardBackwardOutput } from "./convert.ts";
import { modelConfigToHfJson } from "./storage/loadModel.ts";
import { listLocalModels, missingFor, resolveModel, type ResolveOptions } from "./resolve.ts";
import { EmbeddedSamplingClient } from "./samplingClient.ts";
import { CheckpointStore, defaultStoreDir } from "./storage/store.ts";
import { EngineWorkerHost } from "./worker/host.ts";
import type { CreateModelResult, ModelSourceSpec, SamplerSourceSpec } from "./worker/protocol.ts";

export interface EmbeddedServiceClientOptions {
  /** Checkpoint store root (default $COOKBOOK_HOME/checkpoints, COOKBOOK_HOME defaulting to ~/.cookbook). */
  storeDir?: string;
  /** Kernel implementation (default: native with a fallback to the TypeScript reference). */
  kernels?: "native" | "reference";
  /** How base model names are found (environment, fixtures folder, downloads). */
  resolve?: ResolveOptions;
}

/** A model trained from scratch: a decoder config (ours, or an HF config.json object) and a seed. */
export interface ScratchModelSpec {
  config: ModelConfig | Record<string, unknown>;
  seed?: number;
  /** The name recorded as base model and tokenizer id (default "scratch"). */
  name?: string;
}

const SUPPORTED_MODEL_TYPES: ReadonlySet<string> = new Set(CHECKPOINT_MODEL_TYPES);

function newSamplerId(): string {
  return `sampler-${randomBytes(4).toString("hex")}`;
}

/** Creates a sampler in the worker and wraps it (queued in call order, like training requests). */
async function openSampler(
  host: EngineWorkerHost,
  baseModel: string,
  modelPath: string | undefined,
  source: SamplerSourceSpec,
): Promise<EmbeddedSamplingClient> {
  const samplerId = newSamplerId();
  const info = await host.submit({ op: "createSampler", samplerId, source });
  return new EmbeddedSamplingClient(host, samplerId, baseModel, modelPath, info);
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** Checks LoRA options with the hosted service's messages and fills its defaults. */
function loraSetup(options: CreateLoraTrainingClientOptions): TrainableSetup {
  const rank = options.rank ?? 32;
  if (!(typeof rank === "number" && rank > 0)) throw new InvalidArgumentError("lora_config.rank must be positive");
  if (!isPowerOfTwo(rank)) throw new InvalidArgumentError("lora_config.rank must be a power of 2");
  const trainAttn = options.trainAttn ?? true;
  const trainMlp = options.trainMlp ?? true;
  const trainUnembed = options.trainUnembed ?? true;
  if (!trainAttn && !trainMlp && !trainUnembed) {
    throw new InvalidArgumentError("At least one of train_unembed, train_mlp, or train_attn must be True");
  }
  const seed = options.seed ?? randomInt(0, 2 ** 31 - 1);
  if (!Number.isSafeInteger(seed)) throw new InvalidArgumentError(`lora_config.seed must be an integer, got ${seed}`);
  return { mode: "lora", rank, seed, trainAttn, trainMlp, trainUnembed };
}

function newModelId(): string {
  return `local-${randomBytes(4).toString("hex")}`;
}

function hfConfigJson(config: ModelConfig | Record<string, unknown>): Record<string, unknown> {
  return "modelType" in config ? modelConfigToHfJson(config as ModelConfig) : config;
}

interface ModelFacts {
  isLora: boolean;
  loraRank?: number;
  modelType: string;
  tokenizerId?: string;
}

export class EmbeddedTrainingClient implements TrainingClient {
  constructor(
    private readonly host: EngineWorkerHost,
    readonly modelId: string,
    readonly baseModel: string,
    private readonly facts: ModelFacts,
    /** Opens a sampler on a checkpoint path (the service client's createSamplingClient). */
    private readonly samplerFromPath: (modelPath: string) => Promise<SamplingClient>,
  ) {}

  private fwdbwd(data: Datum[], lossFn: LossFnName, lossFnConfig: Record<string, number> | undefined, backward: boolean): TinkerFuture<ForwardBackwardOutput> {
    const batch = datumsToBatch(data);
    const result = this.host.submit({ op: "forwardBackward", modelId: this.modelId, batch, lossFn, lossFnConfig, backward });
    return futureFromPromise(result.then(toForwardBackwardOutput));
  }

  async forward(data: Datum[], lossFn: LossFnName, lossFnConfig?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return this.fwdbwd(data, lossFn, lossFnConfig, false);
  }

  async forwardBackward(data: Datum[], lossFn: LossFnName, lossFnConfig?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return this.fwdbwd(data, lossFn, lossFnConfig, true);
  }

  forwardBackwardCustom(data: Datum[], lossFn: CustomLossFn): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return forwardBackwardCustom(this, data, lossFn);
  }

  async optimStep(adamParams: AdamParams = {}): Promise<TinkerFuture<OptimStepResponse>> {
    const parsed = AdamParamsSchema.safeParse(adamParams);
    if (!parsed.success) {
      throw new InvalidArgumentError(`adam_params: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
    }
    const result = this.host.submit({ op: "optimStep", modelId: this.modelId, adam: parsed.data });
    return futureFromPromise(result.then((metrics) => ({ metrics })));
  }

  async saveState(name: string, options: { ttlSeconds?: number; overwrite?: boolean } = {}): Promise<TinkerFuture<SaveWeightsResponse>> {
    validateCheckpointName(name);
    const result = this.host.submit({
      op: "save",
      modelId: this.modelId,
      kind: "weights",
      name,
      overwrite: options.overwrite ?? false,
      ttlSeconds: options.ttlSeconds,
    });
    return futureFromPromise(result.then((r) => ({ path: r.path })));
  }

  async saveWeightsForSampler(name: string, options: { ttlSeconds?: number } = {}): Promise<TinkerFuture<SaveWeightsResponse>> {
    validateCheckpointName(name);
    const result = this.host.submit({ op: "save", modelId: this.modelId, kind: "sampler_weights", name, overwrite: true, ttlSeconds: options.ttlSeconds });
    return futureFromPromise(result.then((r) => ({ path: r.path })));
  }

  private load(path: string, optimizer: boolean): TinkerFuture<LoadWeightsResponse> {
    parseTinkerPath(path);
    const result = this.host.submit({ op: "load", modelId: this.modelId, path, optimizer });
    return futureFromPromise(result.then((r) => ({ path: r.path, model_id: this.modelId })));
  }

  async loadState(path: string): Promise<TinkerFuture<LoadWeightsResponse>> {
    return this.load(path, false);
  }

  async loadStateWithOptimizer(path: string): Promise<TinkerFuture<LoadWeightsResponse>> {
    return this.load(path, true);
  }

  /** Snapshots the weights as they are after every request submitted before this call. */
  async saveWeightsAndGetSamplingClient(): Promise<EmbeddedSamplingClient> {
    return openSampler(this.host, this.baseModel, undefined, { kind: "snapshot", modelId: this.modelId });
  }

  async createSamplingClient(modelPath: string): Promise<SamplingClient> {
    return this.samplerFromPath(modelPath);
  }

  async getInfo(): Promise<GetInfoResponse> {
    const info: GetInfoResponse = {
      model_id: this.modelId,
      model_data: { arch: this.facts.modelType, model_name: this.baseModel },
      is_lora: this.facts.isLora,
      model_name: this.baseModel,
    };
    if (this.facts.tokenizerId !== undefined) info.model_data.tokenizer_id = this.facts.tokenizerId;
    if (this.facts.loraRank !== undefined) info.lora_rank = this.facts.loraRank;
    return info;
  }

  /** Embedded only: the optimizer's step and moments, copied out of the worker (for tests and diagnostics). */
  async optimizerState(): Promise<{ step: number; m: Map<string, Float32Array>; v: Map<string, Float32Array> }> {
    return this.host.submit({ op: "optimizerState", modelId: this.modelId });
  }

  /** Embedded only: frees the model's memory in the worker; the client is unusable afterwards. */
  async unload(): Promise<void> {
    await this.host.submit({ op: "unload", modelId: this.modelId });
  }
}

export class EmbeddedRestClient implements RestClient {
  constructor(private readonly store: CheckpointStore) {}

  async listTrainingRuns(options: { limit?: number; offset?: number } = {}): Promise<TrainingRunsList> {
    return this.store.listRuns(options);
  }

  async getTrainingRun(trainingRunId: string): Promise<TrainingRun> {
    return this.store.getRun(trainingRunId);
  }

  async getTrainingRunByTinkerPath(tinkerPath: string): Promise<TrainingRun> {
    return this.store.getRun(parseTinkerPath(tinkerPath).modelId);
  }

  async listCheckpoints(trainingRunId: string): Promise<CheckpointsList> {
    return this.store.listCheckpoints(trainingRunId);
  }

  async deleteCheckpointFromTinkerPath(tinkerPath: string): Promise<void> {
    this.store.delete(tinkerPath);
  }

  async getWeightsInfoByTinkerPath(tinkerPath: string): Promise<WeightsInfo> {
    return this.store.weightsInfo(tinkerPath);
  }
}

export class EmbeddedServiceClient implements ServiceClient {
  readonly engineKind = "embedded" as const;
  readonly store: CheckpointStore;
  private hostInstance: EngineWorkerHost | null = null;
  private closed = false;

  constructor(private readonly options: EmbeddedServiceClientOptions = {}) {
    this.store = new CheckpointStore(options.storeDir ?? defaultStoreDir(options.resolve?.env ?? process.env));
  }

  /** The worker starts on first training use, so REST-only use costs no thread. */
  private host(): EngineWorkerHost {
    if (this.closed) throw new TinkerError("this embedded service client was closed; create a new one");
    this.hostInstance ??= new EngineWorkerHost({ storeDir: this.store.root, kernels: this.options.kernels });
    return this.hostInstance;
  }

  async getServerCapabilities(): Promise<ServerCapabilities> {
    const models = listLocalModels({ env: this.options.resolve?.env, fixturesDir: this.options.resolve?.fixturesDir });
    const seen = new Set<string>();
    const supported: ServerCapabilities["supported_models"] = [];
    for (const m of models) {
      if (seen.has(m.name)) continue;
      seen.add(m.name);
      const entry: ServerCapabilities["supported_models"][number] = { model_name: m.name };
      try {
        const cfg = JSON.parse(readFileSync(join(m.dir, "config.json"), "utf8")) as {
          model_type?: unknown;
          max_position_embeddings?: unknown;
          text_config?: { max_position_embeddings?: unknown };
        };
        // The HF cache also holds models of architectures this engine cannot run.
        if (!SUPPORTED_MODEL_TYPES.has(String(cfg.model_type))) continue;
        const maxPositions = cfg.max_position_embeddings ?? cfg.text_config?.max_position_embeddings;
        if (typeof maxPositions === "number") entry.max_context_length = maxPositions;
      } catch {
        continue;
      }
      supported.push(entry);
    }
    return { supported_models: supported };
  }

  private async createModel(
    baseModel: string,
    source: ModelSourceSpec,
    setup: TrainableSetup,
    userMetadata: Record<string, string> | undefined,
    tokenizerId: string | undefined,
  ): Promise<EmbeddedTrainingClient> {
    const modelId = newModelId();
    const host = this.host();
    const created: CreateModelResult = await host.submit({ op: "createModel", modelId, baseModel, source, setup, userMetadata, record: true });
    return new EmbeddedTrainingClient(
      host,
      modelId,
      baseModel,
      {
        isLora: setup.mode === "lora",
        loraRank: setup.mode === "lora" ? setup.rank : undefined,
        modelType: created.modelType,
        tokenizerId,
      },
      (modelPath) => this.createSamplingClient({ modelPath }),
    );
  }

  async createLoraTrainingClient(baseModel: string, options: CreateLoraTrainingClientOptions = {}): Promise<EmbeddedTrainingClient> {
    const setup = loraSetup(options);
    const resolved = await resolveModel(baseModel, this.options.resolve);
    return this.createModel(baseModel, { kind: "dir", dir: resolved.dir }, setup, options.userMetadata, baseModel);
  }

  /**
   * Embedded only (the hosted API has no such call): trains every weight of a model, either a
   * named base model or a fresh random one from a config. Meant for small models.
   */
  async createFullTrainingClient(
    base: string | ScratchModelSpec,
    options: { seed?: number; userMetadata?: Record<string, string> } = {},
  ): Promise<EmbeddedTrainingClient> {
    if (typeof base === "string") {
      const resolved = await resolveModel(base, this.options.resolve);
      return this.createModel(base, { kind: "dir", dir: resolved.dir }, { mode: "full", seed: options.seed ?? 0 }, options.userMetadata, base);
    }
    const seed = base.seed ?? options.seed ?? 0;
    const name = base.name ?? "scratch";
    return this.createModel(name, { kind: "random", configJson: hfConfigJson(base.config), seed }, { mode: "full", seed }, options.userMetadata, base.name);
  }

  private async fromState(path: string, optimizer: boolean, userMetadata: Record<string, string> | undefined): Promise<EmbeddedTrainingClient> {
    parseTinkerPath(path);
    const info = this.store.weightsInfo(path);
    let client: EmbeddedTrainingClient;
    if (info.is_lora) {
      const { meta } = this.store.locate(path);
      const setup = loraSetup({
        rank: info.lora_rank ?? undefined,
        seed: meta.lora?.seed,
        trainAttn: info.train_attn ?? true,
        trainMlp: info.train_mlp ?? true,
        trainUnembed: info.train_unembed ?? true,
      });
      let dir: string;
      try {
        dir = (await resolveModel(info.base_model, this.options.resolve)).dir;
      } catch (err) {
        // A base given as a relative path may not resolve from another working directory.
        if (meta.base_model_dir === undefined || missingFor(meta.base_model_dir, "model") !== null) throw err;
        dir = meta.base_model_dir;
      }
      client = await this.createModel(info.base_model, { kind: "dir", dir }, setup, userMetadata, info.base_model);
    } else {
      // A full-weight checkpoint is itself a complete model folder.
      const { dir } = this.store.locate(path);
      client = await this.createModel(
        info.base_model,
        { kind: "dir", dir },
        { mode: "full", seed: 0 },
        userMetadata,
        existsSync(join(dir, "tokenizer.json")) || existsSync(join(dir, "tokenizer_config.json")) ? dir : info.base_model,
      );
    }
    try {
      await (await (optimizer ? client.loadStateWithOptimizer(path) : client.loadState(path))).result();
    } catch (err) {
      await client.unload().catch(() => undefined);
      throw err;
    }
    return client;
  }

  createTrainingClientFromState(path: string, options: { userMetadata?: Record<string, string> } = {}): Promise<EmbeddedTrainingClient> {
    return this.fromState(path, false, options.userMetadata);
  }

  createTrainingClientFromStateWithOptimizer(path: string, options: { userMetadata?: Record<string, string> } = {}): Promise<EmbeddedTrainingClient> {
    return this.fromState(path, true, options.userMetadata);
  }

  /**
   * A sampler pinned to a checkpoint (`tinker://…/sampler_weights/…` or `…/weights/…`; LoRA
   * adapters are merged into the base once) or to a base model.
   */
  async createSamplingClient(options: { modelPath?: string; baseModel?: string }): Promise<EmbeddedSamplingClient> {
    const { modelPath, baseModel } = options ?? {};
    if (modelPath !== undefined && modelPath !== null) {
      parseTinkerPath(modelPath);
      const info = this.store.weightsInfo(modelPath);
      let baseDir: string | undefined;
      if (info.is_lora) {
        try {
          baseDir = (await resolveModel(info.base_model, this.options.resolve)).dir;
        } catch (err) {
          // A base given as a relative path may not resolve from another working directory.
          const { meta } = this.store.locate(modelPath);
          if (meta.base_model_dir === undefined || missingFor(meta.base_model_dir, "model") !== null) throw err;
          baseDir = meta.base_model_dir;
        }
      }
      return openSampler(this.host(), info.base_model, modelPath, { kind: "checkpoint", path: modelPath, baseDir });
    }
    if (baseModel === undefined || baseModel === null || baseModel === "") {
      throw new InvalidArgumentError("createSamplingClient needs modelPath (a tinker:// checkpoint path) or baseModel");
    }
    const resolved = await resolveModel(baseModel, this.options.resolve);
    return openSampler(this.host(), baseModel, undefined, { kind: "base", dir: resolved.dir });
  }

  createRestClient(): EmbeddedRestClient {
    return new EmbeddedRestClient(this.store);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.hostInstance !== null) await this.hostInstance.close();
    this.hostInstance = null;
  }
}
