// The embedded engine: the Tinker API served in-process by a CPU training engine running in a
// worker thread, with a local checkpoint store. Only a factory that picks an engine imports this.
import { EmbeddedServiceClient, type EmbeddedServiceClientOptions } from "./client.ts";

export function createEmbeddedServiceClient(options: EmbeddedServiceClientOptions = {}): EmbeddedServiceClient {
  return new EmbeddedServiceClient(options);
}

export {
  EmbeddedRestClient, EmbeddedServiceClient, EmbeddedTrainingClient, SAMPLING_NOT_IMPLEMENTED,
  type EmbeddedServiceClientOptions, type ScratchModelSpec,
} from "./client.ts";
export {
  ModelNotFoundError, cookbookHome, defaultFixturesDir, downloadToCache, findCachedSnapshot, hfCacheRepoDir, hfEndpoint,
  hfHubCacheDir, listLocalModels, missingFor, resolveModel, TOKENIZER_FILES,
  type LocalModel, type ModelNeed, type ModelSource, type ResolveOptions, type ResolvedModel,
} from "./resolve.ts";
export { CheckpointStore, defaultStoreDir, peftAdapterConfig, peftTargetModules, type CheckpointMeta, type LoraInfo } from "./store.ts";
export { loadModelDir, loadModelWeights, modelConfigToHfJson, readModelConfig } from "./loadModel.ts";
