// Supervised learning: datasets, the pipelined loop, and the NLL evaluator.
export * from "./types.ts";
export * from "./common.ts";
export { DataFormatError, parseConversationLine, readConversationFile, checkRoles, type ConversationRow } from "./conversationFile.ts";
export {
  type Conversation,
  conversationDatasets,
  FromConversationFileBuilder,
  rendererFor,
  SupervisedDatasetFromRows,
  type ConversationDatasetOptions,
  type FromConversationFileOptions,
} from "./data.ts";
export { ChatDatasetSpecSchema, chatDatasetBuilder, chatDatasetFields, chatDatasetFromConfig, type ChatDatasetSpec } from "./datasetSpec.ts";
export { FromHFDatasetBuilder, type FromHFDatasetOptions } from "./hf/builder.ts";
export { readParquetConversations } from "./hf/parquet.ts";
export { NLLEvaluator } from "./nllEvaluator.ts";
export { positionOf, resumeStep, type LoopPosition } from "./train.ts";
export { main, type SupervisedMainOptions, type SupervisedRunResult } from "./train.ts";
export { SupervisedConfigSchema, type SupervisedConfig, type SupervisedConfigInput } from "./config.ts";
