// The library entry for recipe authors: what a recipe needs to define a config, pick an engine,
// render chats, build datasets and environments, and run the supervised and RL loops. Each layer's
// full surface stays available under its namespace (e.g. `tinker`, `renderers`, `rl`).

// The Tinker API and the engine factory (embedded by default, HTTP when base_url or a key is set).
export { createServiceClient, type CreateServiceClientOptions } from "./service.ts";
export type { ServiceClient, TrainingClient, SamplingClient, RestClient, TinkerFuture } from "./tinker/clients.ts";
export type { Datum, ModelInput, TensorData, SamplingParams, AdamParams, ForwardBackwardOutput } from "./tinker/types.ts";
export { modelInputFromInts, modelInputToInts } from "./tinker/modelInput.ts";
export { makeDatum } from "./tinker/datum.ts";
export { parseTinkerPath, formatTinkerPath } from "./tinker/paths.ts";

// Recipes and configs.
export { defineRecipe, type Recipe } from "./config/recipe.ts";
export { parseConfigArgs } from "./config/parse.ts";
export { LogDirBehaviorSchema, LrScheduleSchema } from "./config/common.ts";
export { getLr, computeScheduleLrMultiplier } from "./hyperparams.ts";

// Chats and tokens.
export { getTokenizer, registerTokenizer } from "./tokenizers/index.ts";
export type { Tokenizer } from "./tokenizers/types.ts";
export { getRenderer, registerRenderer } from "./renderers/index.ts";
export type { Message, TrainOnWhat } from "./renderers/index.ts";
export { getRecommendedRendererName } from "./modelInfo.ts";
export { conversationToDatum, datumFromModelInputWeights } from "./supervised/common.ts";
export { TinkerTokenCompleter, TinkerMessageCompleter } from "./completers.ts";

// The training core every loop runs on: shared config fields, the run, resume, checkpoints.
export { adamFields, adamParams, adapterFields, checkpointFields, lrScheduleFields, optimizerFields, overrideDefaults, runFields } from "./training/config.ts";
export { withTrainingRun, type TrainingContext } from "./training/run.ts";
export { openTrainingClient } from "./training/open.ts";
export { CheckpointManager } from "./training/checkpoints.ts";
export { SupervisedConfigSchema } from "./supervised/config.ts";
export { RLConfigSchema } from "./rl/config.ts";

// Experiments: several runs compared on test sets (`cookbook batch <file>`).
export { defineExperiment, ExperimentSchema, type Experiment, type ExperimentInput } from "./experiments/schema.ts";

// Run directories: logging, checkpoints and run control.
export { withRun, startRun, getLastCheckpoint, appendCheckpoint, installRunControl } from "./runs/index.ts";
export { MetricsLogger, StepTimer } from "./log/index.ts";
export { DiskFullError } from "./files/diskErrors.ts";

// Full surfaces by layer.
export * as tinker from "./tinker/index.ts";
export * as renderers from "./renderers/index.ts";
export * as supervised from "./supervised/index.ts";
export * as rl from "./rl/index.ts";
export * as evaluation from "./eval/index.ts";
export * as grading from "./grading/index.ts";
export * as runs from "./runs/index.ts";
export * as training from "./training/index.ts";
