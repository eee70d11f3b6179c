// Run directories: manifest, discovery, liveness, checkpoints, log-dir policy, control, sessions.
export { type CheckpointRecord, CHECKPOINTS_FILE, appendCheckpoint, checkpointName, getLastCheckpoint, readCheckpoints } from "./checkpoints.ts";
export { type RunControl, type RunControlOptions, type RunSignalAction, SIGNAL_FOR_ACTION, installRunControl, signalRun } from "./control.ts";
export {
  MAIN_METRIC_KEYS,
  type RunSummary,
  type TrainingKind,
  discoverRuns,
  inferTrainingKind,
  isRunDir,
  readLastJsonlRecord,
  summarizeRun,
} from "./discovery.ts";
export { type DisplayStatus, HEARTBEAT_STALE_MS, type RunState, isPidAlive, runState } from "./liveness.ts";
export { type CheckLogDirOptions, type LogDirOutcome, RUN_FILES, RefusedDeleteError, checkLogDir, deleteRefusal, deleteRunDir } from "./logDir.ts";
export {
  DEFAULT_HEARTBEAT_MS,
  type ManifestHandle,
  type ManifestInit,
  type RunManifest,
  RunManifestSchema,
  type RunStatus,
  readManifest,
  startManifest,
  writeManifest,
} from "./manifest.ts";
export { defaultLogRoot, expandLogPath } from "./paths.ts";
export { LOCK_FILE, type RunLock, type RunLockOwner, RunLockedError, acquireRunLock, assertNoLiveWriter, liveLockOwner } from "./runLock.ts";
export { type RunOutcome, type RunSession, type RunSessionOptions, startRun, withRun } from "./session.ts";
export { LOG_FILE, LogTailReader, type MetricsTailReader, STDOUT_FILE, metricsTailReader, readLogTail, readMetricTail, readRunConfig } from "./logs.ts";
export {
  type IterationInfo,
  TRAIN_EXAMPLES_FILE,
  type TrainingExample,
  type TranscriptRecord,
  type TranscriptStep,
  iterationForStep,
  listIterations,
  normalizeTranscript,
  readTrainingExamples,
  readTranscripts,
  withGroupAdvantages,
} from "./transcripts.ts";
export { removeCheckpointRecord } from "./checkpointEdit.ts";
export { type TokenGapRecord, readTokenGaps, tokenGapKey } from "../log/transcripts/tokenGaps.ts";
export { type MetricColumns, readMetricColumns } from "../log/metricColumns.ts";
export { DPO_PAIRS_FILE, type DpoPair, type DpoPairsByStep, pairMargin, readDpoPairs } from "./dpoPairs.ts";
export { EXISTING_DIR_CHOICES, type ExistingDirChoice, freshName, hasContent, prepareLaunchDir } from "./launchDir.ts";
