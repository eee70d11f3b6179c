// The RL layer's public surface, for recipes.
export * from "./types.ts";
export * from "../renderers/policyRenderer.ts";
export * from "./dataProcessing.ts";
export * from "./metrics.ts";
export * from "./trajectoryMetrics.ts";
export * from "./rollouts.ts";
export * from "./problemEnv.ts";
export * from "./messageEnv.ts";
export * from "./offPolicy.ts";
export * from "./asyncQueue.ts";
export * from "./evaluator.ts";
export * from "./config.ts";
export * from "./trainStep.ts";
export { main, type RLMainOptions, type RLRunResult } from "./train.ts";
