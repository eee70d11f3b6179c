// Learning-rate heuristics of the cookbook (inventory §3.1b, protocol §8): get_lr and LR schedules.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { LrSchedule } from "./config/common.ts";
import { UnknownModelError } from "./modelInfo.ts";

/** The model is known but the LR formula was not fitted for its family. */
export class UncalibratedModelError extends Error {
  override name = "UncalibratedModelError";
}
// A model get_lr cannot place is the same error as one the model lineup does not know, so one
// `instanceof UnknownModelError` catches both.
export { UnknownModelError };

/** The parts of a Hugging Face config.json that matter here. */
export interface ModelConfigLike {
  hidden_size?: number;
  model_type?: string;
  text_config?: { hidden_size?: number; model_type?: string };
}

export interface GetLrOptions {
  isLora?: boolean;
  /** The model's config.json contents, when the caller already has them. */
  config?: ModelConfigLike;
  /** Finds the model's config: a config object, a path to config.json or to the model directory. */
  resolveConfig?: (modelName: string) => ModelConfigLike | string | undefined;
}

/** hidden_size by model name without the organisation, lowercased. */
const HIDDEN_SIZE: Record<string, number> = {
  "llama-3.2-1b": 2048,
  "llama-3.2-3b": 3072,
  "llama-3.1-8b": 4096,
  "llama-3.1-70b": 8192,
  "llama-3.3-70b": 8192,
  "qwen3-0.6b": 1024,
  "qwen3-1.7b": 2048,
  "qwen3-4b": 2560,
  "qwen3-8b": 4096,
  "qwen3-14b": 5120,
  "qwen3-32b": 5120,
  "qwen3-30b-a3b": 2048,
  "qwen3-235b-a22b": 4096,
  "qwen3-4b-instruct-2507": 2560,
  "qwen3-30b-a3b-instruct-2507": 2048,
  "qwen3-235b-a22b-instruct-2507": 4096,
  "qwen3-vl-30b-a3b-instruct": 2048,
  "qwen3-vl-235b-a22b-instruct": 4096,
};

const UNCALIBRATED = ["deepseek", "gpt-oss", "kimi", "nemotron", "inkling"];
const EXPONENT = { llama: 0.781, qwen: 0.0775 } as const;
type Family = keyof typeof EXPONENT;

function tableHiddenSize(modelName: string): number | undefined {
  const base = modelName.slice(modelName.lastIndexOf("/") + 1).toLowerCase();
  return HIDDEN_SIZE[base] ?? HIDDEN_SIZE[base.replace(/-(instruct|base|chat|thinking)(-\d+)?$/, "")];
}

function readConfigFile(path: string): ModelConfigLike | undefined {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, "config.json") : path;
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as ModelConfigLike;
}

function findConfig(modelName: string, options: GetLrOptions): ModelConfigLike | undefined {
  if (options.config) return options.config;
  const resolved = options.resolveConfig?.(modelName);
  if (typeof resolved === "string") return readConfigFile(resolved);
  if (resolved) return resolved;
  // A local model directory given as the name.
  return existsSync(join(modelName, "config.json")) ? readConfigFile(modelName) : undefined;
}

function familyOf(modelName: string, config: ModelConfigLike | undefined): Family | undefined {
  const lower = modelName.toLowerCase();
  if (lower.includes("llama")) return "llama";
  if (lower.includes("qwen")) return "qwen";
  const type = (config?.model_type ?? config?.text_config?.model_type ?? "").toLowerCase();
  if (type.startsWith("llama")) return "llama";
  if (type.startsWith("qwen")) return "qwen";
  return undefined;
}

/**
 * The cookbook's recommended learning rate: 5e-5 × (10 if LoRA) × (2000 / hidden_size)^P with
 * P = 0.781 for Llama and 0.0775 for Qwen.
 */
export function getLr(modelName: string, options: GetLrOptions = {}): number {
  const lower = modelName.toLowerCase();
  const uncalibrated = UNCALIBRATED.find((family) => lower.includes(family));
  if (uncalibrated) throw new UncalibratedModelError(`get_lr is not yet calibrated for ${modelName} (${uncalibrated} models)`);
  const fromTable = tableHiddenSize(modelName);
  const config = fromTable === undefined || !/llama|qwen/.test(lower) ? findConfig(modelName, options) : undefined;
  const family = familyOf(modelName, config);
  if (!family) {
    throw new UnknownModelError(`unknown model ${modelName}: get_lr supports Llama and Qwen models (by name or config.json model_type)`);
  }
  const hiddenSize = fromTable ?? config?.hidden_size ?? config?.text_config?.hidden_size;
  if (hiddenSize === undefined) {
    throw new UnknownModelError(`unknown model ${modelName}: hidden_size is not in the built-in table and no config.json was found`);
  }
  const multiplier = (options.isLora ?? true) ? 10 : 1;
  return 5e-5 * multiplier * (2000 / hiddenSize) ** EXPONENT[family];
}

/** LR multiplier at `step` of `totalSteps`: linear 1−t, cosine 0.5(1+cos πt), constant 1. */
export function computeScheduleLrMultiplier(schedule: LrSchedule, step: number, totalSteps: number): number {
  const t = totalSteps > 0 ? step / totalSteps : 0;
  switch (schedule) {
    case "linear":
      return 1 - t;
    case "cosine":
      return 0.5 * (1 + Math.cos(Math.PI * t));
    case "constant":
      return 1;
  }
}
