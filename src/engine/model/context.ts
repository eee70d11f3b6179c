// What every layer function needs about the current batch besides its own parameters.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import type { ModelConfig } from "./config.ts";

export interface BatchContext {
  readonly k: Kernels;
  readonly config: ModelConfig;
  /** Packed tokens in the batch. */
  readonly T: number;
  readonly positions: Int32Array;
  readonly seqStarts: Int32Array;
  readonly invFreq: FloatArray;
  /** head_dim^-0.5. */
  readonly attnScale: number;
}
