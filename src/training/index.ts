// The training core every loop shares: config field groups, the run, the training client it
// continues with, and the checkpoint manager.
export { adapterFields, checkpointFields, overrideDefaults, runFields, type CheckpointPolicy, type TrainingRunConfig } from "./config.ts";
export { CheckpointManager, type PendingSave, type SavedPaths, type SaveKind } from "./checkpoints.ts";
export { openTrainingClient, resumeCandidates, type OpenedTrainingClient, type OpenTrainingClientOptions } from "./open.ts";
export { trainingMetadata, withTrainingRun, type TrainingOutcome, type TrainingContext, type TrainingRunOptions } from "./run.ts";
export { positionOf, resumeStep, type LoopPosition } from "./position.ts";
