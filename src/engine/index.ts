// The embedded engine: the Tinker API served in-process by a CPU training engine running in a
// worker thread, with a local checkpoint store. Only a factory that picks an engine imports this.
import { z } from "zod";
import { InvalidArgumentError } from "../tinker/errors.ts";
import { EmbeddedServiceClient, type EmbeddedServiceClientOptions } from "./client.ts";

/** The options that can come from configuration (the `resolve` hooks are for code and tests). */
export const EmbeddedEngineConfigSchema = z.object({
  storeDir: z.string().min(1).optional().describe("Checkpoint store folder (default $COOKBOOK_HOME/checkpoints, COOKBOOK_HOME defaulting to ~/.cookbook)"),
  kernels: z.enum(["native", "reference"]).optional().describe("Kernel implementation (default: native, falling back to the TypeScript reference)"),
});

export function createEmbeddedServiceClient(options: EmbeddedServiceClientOptions = {}): EmbeddedServiceClient {
  const { resolve, ...rest } = options;
  const parsed = EmbeddedEngineConfigSchema.strict().safeParse(rest);
  if (!parsed.success) {
    throw new InvalidArgumentError(`embedded engine options: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
  }
  return new EmbeddedServiceClient({ ...parsed.data, resolve });
}

export {
  EmbeddedRestClient,
  EmbeddedServiceClient,
  EmbeddedTrainingClient,
  type EmbeddedServiceClientOptions,
  type ScratchModelSpec,
} from "./client.ts";
export { EmbeddedSamplingClient } from "./samplingClient.ts";
export {
  ModelNotFoundError,
  cookbookHome,
  defaultFixturesDir,
  downloadToCache,
  findCachedModelSnapshot,
  hfCacheRepoDir,
  hfEndpoint,
  hfHubCacheDir,
  listLocalModels,
  missingFor,
  resolveModel,
  TOKENIZER_FILES,
  type LocalModel,
  type ModelNeed,
  type ModelSource,
  type ResolveOptions,
  type ResolvedModel,
} from "./resolve.ts";
export { CheckpointStore, defaultStoreDir, peftAdapterConfig, peftTargetModules, type CheckpointMeta, type LoraInfo } from "./storage/store.ts";
export {
  baseWeightsMode,
  loadBaseModelDir,
  loadModelDir,
  loadModelWeights,
  modelConfigToHfJson,
  readModelConfig,
  type BaseWeightsMode,
} from "./storage/loadModel.ts";
