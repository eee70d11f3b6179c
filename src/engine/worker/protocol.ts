// Messages between the engine's host (the caller's thread) and its compute worker. Typed arrays
// travel by transfer, never by copy; errors travel as plain records and become Errors again.
import type { LossFnName, ResolvedAdamParams } from "../../tinker/types.ts";
import type { CheckpointKind } from "../../tinker/paths.ts";
import type { SequenceInput, TrainableSetup } from "../model/model.ts";

/** Where a model's starting weights come from. */
export type ModelSourceSpec =
  | { kind: "dir"; dir: string }
  | { kind: "random"; configJson: Record<string, unknown>; seed: number };

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

export type WorkerRequest =
  | CreateModelRequest
  | ForwardBackwardRequest
  | OptimStepRequest
  | SaveRequest
  | LoadRequest
  | UnloadRequest
  | OptimizerStateRequest;

export interface CreateModelResult {
  modelType: string;
  vocabSize: number;
  maxPositionEmbeddings: number;
  trainableParameters: number;
}

export interface ForwardBackwardResultMessage {
  logprobs: Float32Array[];
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

export type WorkerMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: SerializedError }
  | { id: -1; ready: true };

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
