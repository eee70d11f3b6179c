// Evaluator interfaces shared by the training loops.
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
