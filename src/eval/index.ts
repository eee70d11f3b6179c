// Evaluation: evaluator interfaces shared by the training loops, benchmarks as data, grading,
// the resumable benchmark runner, the eval store and inline benchmark evaluators.
export {
  type EvalMetrics,
  type Evaluator,
  type EvaluatorBuilder,
  type RunEvaluatorsOptions,
  type SamplingClientEvaluator,
  type TrainingClientEvaluator,
  buildEvaluators,
  isTrainingClientEvaluator,
  runEvaluators,
} from "./evaluators.ts";
export * from "./benchmark.ts";
export { resolveBenchmark, registerBenchmark, listBenchmarks, type BenchmarkEntry, UnknownBenchmarkError } from "./registry.ts";
export * from "./choiceGrading.ts";
export { passAtK, meanPassAtK, reportedKs } from "./passAtK.ts";
export { runBenchmark, computeBenchmarkMetrics, MemorySink, type TrajectorySink, type ProgressUpdate, type BenchmarkRunResult } from "./runner.ts";
export * from "./store.ts";
export { evaluateModel, resolveEvalTarget, type EvaluateOptions, type EvaluateResult } from "./session.ts";
export { LLMJudge, DEFAULT_RUBRIC, parseJudgeReply, type JudgeOptions, type JudgeVerdict } from "./judge.ts";
export { BenchmarkEvaluator, benchmarkEvaluators, benchmarkEvalFields, type BenchmarkEvaluatorOptions } from "./inline.ts";
export type { EvalRenderer } from "./renderer.ts";
