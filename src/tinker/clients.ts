// Client interfaces of the Tinker API (docs/protocol.md#client-objects). Engines implement these; the
// cookbook layer and recipes only ever see these interfaces.
import type {
  AdamParams,
  CheckpointsList,
  Datum,
  ForwardBackwardOutput,
  GetInfoResponse,
  LoadWeightsResponse,
  LossFnName,
  ModelInput,
  OptimStepResponse,
  SampleResponse,
  SamplingParams,
  SaveWeightsResponse,
  ServerCapabilities,
  TrainingRun,
  TrainingRunsList,
  WeightsInfo,
} from "./types.ts";

/**
 * The second step of a two-step training call. The promise that returns a TinkerFuture resolves
 * once the request is queued in order; `result()` resolves when the work is done. Awaiting the
 * first step of forwardBackward and optimStep back to back, before awaiting either result, is
 * what lets both land in one clock cycle.
 */
export interface TinkerFuture<T> {
  /** Resolves with the result; rejects with the request's error. Cached: calling twice is fine. */
  result(timeoutMs?: number): Promise<T>;
}

/** Where a queued request stands, so front ends can show why a run is waiting. */
export type QueueState = "active" | "paused_capacity" | "paused_rate_limit";

export interface CreateLoraTrainingClientOptions {
  rank?: number;
  seed?: number;
  trainMlp?: boolean;
  trainAttn?: boolean;
  trainUnembed?: boolean;
  userMetadata?: Record<string, string>;
}

/** A user-defined differentiable loss on per-datum logprobs: returns the loss and dLoss/dlogprobs. */
export type CustomLossFn = (data: Datum[], logprobs: Float32Array[]) => { loss: number; gradients: Float32Array[]; metrics?: Record<string, number> };

/**
 * What a remote server knows of this client right now: "alive" (it answers and still has our
 * session, or we have none yet), "session_lost" (it answers but no longer knows our session: it
 * restarted or dropped us, and the models we trained in it are gone), "unreachable".
 */
export type ServerProbe = "alive" | "session_lost" | "unreachable";

export interface ServiceClient {
  /** "embedded" (in-process engine) or "remote" (HTTP to a Tinker-compatible server). */
  readonly engineKind: "embedded" | "remote";
  /** One quick look at the server (no retries); remote engines only. */
  probeServer?(): Promise<ServerProbe>;
  /** The server's base URL (remote engines), for messages that must say which server. */
  readonly baseUrl?: string;
  getServerCapabilities(): Promise<ServerCapabilities>;
  createLoraTrainingClient(baseModel: string, options?: CreateLoraTrainingClientOptions): Promise<TrainingClient>;
  createTrainingClientFromState(path: string, options?: { userMetadata?: Record<string, string> }): Promise<TrainingClient>;
  createTrainingClientFromStateWithOptimizer(path: string, options?: { userMetadata?: Record<string, string> }): Promise<TrainingClient>;
  createSamplingClient(options: { modelPath?: string; baseModel?: string }): Promise<SamplingClient>;
  createRestClient(): RestClient;
  /** Releases workers, timers and connections. */
  close(): Promise<void>;
}

export interface TrainingClient {
  readonly modelId: string;
  readonly baseModel: string;
  forward(data: Datum[], lossFn: LossFnName, lossFnConfig?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>>;
  forwardBackward(data: Datum[], lossFn: LossFnName, lossFnConfig?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>>;
  forwardBackwardCustom(data: Datum[], lossFn: CustomLossFn): Promise<TinkerFuture<ForwardBackwardOutput>>;
  optimStep(adamParams: AdamParams): Promise<TinkerFuture<OptimStepResponse>>;
  /** Weights + optimizer state; returns `tinker://<model_id>/weights/<name>`. */
  saveState(name: string, options?: { ttlSeconds?: number; overwrite?: boolean }): Promise<TinkerFuture<SaveWeightsResponse>>;
  loadState(path: string): Promise<TinkerFuture<LoadWeightsResponse>>;
  loadStateWithOptimizer(path: string): Promise<TinkerFuture<LoadWeightsResponse>>;
  /** Sampler weights only; returns `tinker://<model_id>/sampler_weights/<name>`. */
  saveWeightsForSampler(name: string, options?: { ttlSeconds?: number }): Promise<TinkerFuture<SaveWeightsResponse>>;
  /** An ephemeral snapshot of the current weights, pinned in a new sampler. */
  saveWeightsAndGetSamplingClient(): Promise<SamplingClient>;
  createSamplingClient(modelPath: string): Promise<SamplingClient>;
  getInfo(): Promise<GetInfoResponse>;
}

export interface SampleOptions {
  includePromptLogprobs?: boolean;
  topkPromptLogprobs?: number;
}

export interface SamplingClient {
  /** The base model and, for checkpoints, the `tinker://…/sampler_weights/…` path it is pinned to. */
  readonly baseModel: string;
  readonly modelPath?: string;
  sample(prompt: ModelInput, numSamples: number, params: SamplingParams, options?: SampleOptions): Promise<SampleResponse>;
  /** Logprob of every prompt token given the ones before it; the first entry is null. */
  computeLogprobs(prompt: ModelInput): Promise<(number | null)[]>;
}

export interface RestClient {
  listTrainingRuns(options?: { limit?: number; offset?: number }): Promise<TrainingRunsList>;
  getTrainingRun(trainingRunId: string): Promise<TrainingRun>;
  getTrainingRunByTinkerPath(tinkerPath: string): Promise<TrainingRun>;
  listCheckpoints(trainingRunId: string): Promise<CheckpointsList>;
  deleteCheckpointFromTinkerPath(tinkerPath: string): Promise<void>;
  getWeightsInfoByTinkerPath(tinkerPath: string): Promise<WeightsInfo>;
}
