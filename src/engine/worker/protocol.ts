// Messages between the engine's host (the caller's thread) and its compute worker. Typed arrays
// travel by transfer, never by copy; errors travel as plain records and become Errors again.
import type { LossFnName, ResolvedAdamParams } from "../../tinker/types.ts";
import type { CheckpointKind } from "../../tinker/paths.ts";
import type { SequenceInput, TrainableSetup } from "../model/model.ts";
import type { SampleRequestSpec } from "../sampling/request.ts";
import type { SampleResult } from "../sampling/scheduler.ts";

/** Where a model's starting weights come from. */
export type ModelSourceSpec = { kind: "dir"; dir: string } | { kind: "random"; configJson: Record<string, unknown>; seed: number };

export interface CreateModelRequest {
  op: "createModel";
  modelId: string;
  baseModel: string;
  source: ModelSourceSpec;
  setup: TrainableSetup;
  userMetadata?: Record<string, string>;
  /** Write the run record to the store (false for throwaway models). */
  record: boolean;
}

export interface ForwardBackwardRequest {
  op: "forwardBackward";
  modelId: string;
  batch: SequenceInput[];
  lossFn: LossFnName;
  lossFnConfig?: Record<string, number>;
  backward: boolean;
}

export interface OptimStepRequest {
  op: "optimStep";
  modelId: string;
  adam: ResolvedAdamParams;
}

export interface SaveRequest {
  op: "save";
  modelId: string;
  kind: CheckpointKind;
  name: string;
  overwrite: boolean;
  ttlSeconds?: number;
}

export interface LoadRequest {
  op: "load";
  modelId: string;
  path: string;
  optimizer: boolean;
}

export interface UnloadRequest {
  op: "unload";
  modelId: string;
}

export interface OptimizerStateRequest {
  op: "optimizerState";
  modelId: string;
}

/** What a sampler is pinned to. */
export type SamplerSourceSpec =
  | { kind: "base"; dir: string }
  /** A weights/ or sampler_weights/ checkpoint; baseDir is where a LoRA checkpoint's base model resolved. */
  | { kind: "checkpoint"; path: string; baseDir?: string }
  /** The current weights of a loaded training model, copied now. */
  | { kind: "snapshot"; modelId: string };

export interface CreateSamplerRequest {
  op: "createSampler";
  samplerId: string;
  source: SamplerSourceSpec;
}

export interface ReleaseSamplerRequest {
  op: "releaseSampler";
  samplerId: string;
}

/** Answered asynchronously: the decode scheduler batches it with other sample requests. */
export interface SampleWorkerRequest {
  op: "sample";
  samplerId: string;
  spec: SampleRequestSpec;
}

export interface ComputeLogprobsRequest {
  op: "computeLogprobs";
  samplerId: string;
  prompt: Int32Array;
}

export interface CreateSamplerResult {
  modelType: string;
  vocabSize: number;
  contextLength: number;
}

export type WorkerRequest =
  | CreateModelRequest
  | ForwardBackwardRequest
  | OptimStepRequest
  | SaveRequest
  | LoadRequest
  | UnloadRequest
  | OptimizerStateRequest
  | CreateSamplerRequest
  | ReleaseSamplerRequest
  | SampleWorkerRequest
  | ComputeLogprobsRequest;

export interface CreateModelResult {
  modelType: string;
  vocabSize: number;
  maxPositionEmbeddings: number;
  trainableParameters: number;
}

export interface ForwardBackwardResultMessage {
  logprobs: Float32Array[];
  /** Per datum: targets per position ([N, K] logprobs), present when any datum has K > 1. */
  logprobWidths?: number[];
  lossSum: number;
  metrics: Record<string, number>;
  elementwiseLoss?: Float32Array[];
}

export interface ResultByOp {
  createModel: CreateModelResult;
  forwardBackward: ForwardBackwardResultMessage;
  optimStep: Record<string, number>;
  save: { path: string; sizeBytes: number };
  load: { path: string };
  unload: { modelId: string };
  optimizerState: { step: number; m: Map<string, Float32Array>; v: Map<string, Float32Array> };
  createSampler: CreateSamplerResult;
  releaseSampler: { samplerId: string };
  sample: SampleResult;
  computeLogprobs: (number | null)[];
}

export interface WorkerInit {
  /** Module URL of the worker entry (the bootstrap imports it after registering tsx). */
  entry: string;
  storeDir: string;
  kernels?: "native" | "reference";
}

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  /** HTTP-like status for errors that mirror a service status (404, 409). */
  status?: number;
  body?: unknown;
}

export type WorkerMessage = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: SerializedError } | { id: -1; ready: true };

/** Unique ArrayBuffers under `value` (typed arrays in objects, arrays and maps), for a transfer list. */
export function collectTransferables(value: unknown, out: Set<ArrayBuffer> = new Set()): ArrayBuffer[] {
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== "object") return;
    if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof ArrayBuffer) out.add(v.buffer);
      return;
    }
    if (v instanceof Map) {
      for (const x of v.values()) visit(x);
      return;
    }
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    for (const x of Object.values(v)) visit(x);
  };
  visit(value);
  return [...out];
}
