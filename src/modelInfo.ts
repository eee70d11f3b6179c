// Model name → attributes and recommended renderers, first = default (docs/cookbook-parity.md#model-to-renderer-table).
// Lookup strips a ":suffix" (e.g. ":peft:131072") and needs "org/model"; projects can add their own
// models (e.g. the tiny fixture models) with registerModelAttributes.

export interface ModelAttributes {
  organization: string;
  versionStr: string;
  sizeStr: string;
  isChat: boolean;
  /** Renderer names designed for this model, most recommended first. */
  recommendedRenderers: readonly string[];
  isVl?: boolean;
  isAudioIn?: boolean;
}

export class UnknownModelError extends Error {
  override name = "UnknownModelError";
}

const LLAMA3 = ["llama3"];
const ROLE_COLON = ["role_colon"];
const QWEN3 = ["qwen3", "qwen3_disable_thinking"];
const QWEN3_INSTRUCT = ["qwen3_instruct"];
const QWEN3_VL_INSTRUCT = ["qwen3_vl_instruct"];
const QWEN3_5 = ["qwen3_5", "qwen3_5_disable_thinking"];
const QWEN3_8 = ["qwen3_8_xhigh_reasoning", "qwen3_8_disable_thinking", "qwen3_8_medium_reasoning", "qwen3_8_low_reasoning"];
const DEEPSEEKV3 = ["deepseekv3", "deepseekv3_thinking"];
const GPT_OSS = ["gpt_oss_no_sysprompt", "gpt_oss_medium_reasoning"];
const KIMI_K2 = ["kimi_k2"];
const KIMI_K25 = ["kimi_k25", "kimi_k25_disable_thinking"];
const KIMI_K26 = ["kimi_k26", "kimi_k26_disable_thinking", "kimi_k26_preserve_thinking"];
const NEMOTRON3 = ["nemotron3", "nemotron3_disable_thinking", "nemotron3_preserve_thinking"];
const NEMOTRON3_SUPER = [...NEMOTRON3, "nemotron3_low_thinking"];
const NEMOTRON3_ULTRA = ["nemotron3_ultra", "nemotron3_ultra_disable_thinking", "nemotron3_ultra_medium_thinking", "nemotron3_ultra_preserve_thinking"];
const NEMOTRON3_LIGHTNING = ["nemotron3_ultra", "nemotron3_ultra_disable_thinking", "nemotron3_ultra_preserve_thinking"];

type Row = [name: string, version: string, size: string, isChat: boolean, renderers: string[], extra?: { isVl?: boolean; isAudioIn?: boolean }];

const BY_ORG: Record<string, Row[]> = {
  "meta-llama": [
    ["Llama-3.1-8B-Instruct", "3.1", "8B", true, LLAMA3],
    ["Llama-3.2-1B", "3.2", "1B", false, ROLE_COLON],
    ["Llama-3.2-3B", "3.2", "3B", false, ROLE_COLON],
    ["Llama-3.1-8B", "3.1", "8B", false, ROLE_COLON],
    ["Llama-3.1-70B", "3.1", "70B", false, ROLE_COLON],
    ["Llama-3.3-70B-Instruct", "3.3", "70B", true, LLAMA3],
  ],
  Qwen: [
    ["Qwen3-VL-30B-A3B-Instruct", "3", "30B-A3B", true, QWEN3_VL_INSTRUCT, { isVl: true }],
    ["Qwen3-VL-235B-A22B-Instruct", "3", "235B-A22B", true, QWEN3_VL_INSTRUCT, { isVl: true }],
    ["Qwen3-8B-Base", "3", "8B", false, ROLE_COLON],
    ["Qwen3-30B-A3B-Base", "3", "30B-A3B", false, ROLE_COLON],
    ["Qwen3-8B", "3", "8B", true, QWEN3],
    ["Qwen3-32B", "3", "32B", true, QWEN3],
    ["Qwen3-30B-A3B", "3", "30B-A3B", true, QWEN3],
    ["Qwen3-4B-Instruct-2507", "3", "4B", true, QWEN3_INSTRUCT],
    ["Qwen3-30B-A3B-Instruct-2507", "3", "30B-A3B", true, QWEN3_INSTRUCT],
    ["Qwen3-235B-A22B-Instruct-2507", "3", "235B-A22B", true, QWEN3_INSTRUCT],
    ["Qwen3.5-4B", "3.5", "4B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.5-9B", "3.5", "9B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.5-9B-Base", "3.5", "9B", false, ROLE_COLON, { isVl: true }],
    ["Qwen3.5-27B", "3.5", "27B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.5-35B-A3B", "3.5", "35B-A3B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.5-35B-A3B-Base", "3.5", "35B-A3B", false, ROLE_COLON, { isVl: true }],
    ["Qwen3.5-397B-A17B", "3.5", "397B-A17B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.6-27B", "3.6", "27B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.6-35B-A3B", "3.6", "35B-A3B", true, QWEN3_5, { isVl: true }],
    ["Qwen3.8-27B", "3.8", "27B", true, QWEN3_8, { isVl: true }],
  ],
  "deepseek-ai": [
    ["DeepSeek-V3.1", "3", "671B-A37B", true, DEEPSEEKV3],
    ["DeepSeek-V3.1-Base", "3", "671B-A37B", false, ROLE_COLON],
  ],
  openai: [
    ["gpt-oss-20b", "1", "21B-A3.6B", true, GPT_OSS],
    ["gpt-oss-120b", "1", "117B-A5.1B", true, GPT_OSS],
  ],
  moonshotai: [
    ["Kimi-K2-Thinking", "K2", "1T-A32B", true, KIMI_K2],
    ["Kimi-K2.5", "K2.5", "1T-A32B", true, KIMI_K25, { isVl: true }],
    ["Kimi-K2.6", "K2.6", "1T-A32B", true, KIMI_K26, { isVl: true }],
  ],
  // Small open models the embedded engine runs (docs/numerics.md#model-families); base models, so
  // role_colon (their chat templates have no renderer yet).
  allenai: [["OLMo-2-0425-1B", "2", "1B", false, ROLE_COLON]],
  google: [
    ["gemma-3-270m", "3", "270M", false, ROLE_COLON],
    ["gemma-3-1b-pt", "3", "1B", false, ROLE_COLON],
  ],
  HuggingFaceTB: [["SmolLM3-3B-Base", "3", "3B", false, ROLE_COLON]],
  // Phi-3 has no base release; its chat template has no renderer yet, so role_colon for now.
  microsoft: [["Phi-3-mini-4k-instruct", "3", "3.8B", true, ROLE_COLON]],
  nvidia: [
    ["NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "3", "30B-A3B", true, NEMOTRON3],
    ["NVIDIA-Nemotron-3-Super-120B-A12B-BF16", "3", "120B-A12B", true, NEMOTRON3_SUPER],
    ["NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", "3", "550B-A55B", true, NEMOTRON3_ULTRA],
    ["NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16", "3.5", "30B-A3B", true, NEMOTRON3_LIGHTNING],
  ],
};

const custom = new Map<string, ModelAttributes>();

/** Adds a model (full name "org/model" or a local name such as a fixture directory). */
export function registerModelAttributes(modelName: string, attrs: ModelAttributes): void {
  custom.set(modelName, attrs);
}
export function unregisterModelAttributes(modelName: string): boolean {
  return custom.delete(modelName);
}

export function getModelAttributes(modelNameIn: string): ModelAttributes {
  const registered = custom.get(modelNameIn);
  if (registered !== undefined) return registered;
  const modelName = modelNameIn.split(":", 1)[0]!;
  const base = custom.get(modelName);
  if (base !== undefined) return base;
  const slash = modelName.indexOf("/");
  if (slash === -1) {
    throw new UnknownModelError(`model name must be "org/model", got ${JSON.stringify(modelNameIn)}`);
  }
  const org = modelName.slice(0, slash);
  const version = modelName.slice(slash + 1);
  if (org === "thinkingmachines" && version.startsWith("Inkling")) {
    return { organization: org, versionStr: version, sizeStr: version, isChat: true, recommendedRenderers: ["tml_v0"], isVl: true, isAudioIn: true };
  }
  const rows = BY_ORG[org];
  if (rows === undefined) {
    throw new UnknownModelError(
      `unknown model ${JSON.stringify(modelNameIn)}: unknown organization ${JSON.stringify(org)} (known: ${Object.keys(BY_ORG).join(", ")})`,
    );
  }
  const row = rows.find((r) => r[0] === version);
  if (row === undefined) {
    throw new UnknownModelError(`unknown model ${JSON.stringify(modelNameIn)}; known ${org} models: ${rows.map((r) => r[0]).join(", ")}`);
  }
  const [, versionStr, sizeStr, isChat, recommendedRenderers, extra] = row;
  return { organization: org, versionStr, sizeStr, isChat, recommendedRenderers, ...extra };
}

/** Every model this table knows (the service's lineup, Inkling's base name, and registered ones). */
export function listKnownModels(): string[] {
  const listed = Object.entries(BY_ORG).flatMap(([org, rows]) => rows.map((r) => `${org}/${r[0]}`));
  return [...listed, "thinkingmachines/Inkling", ...custom.keys()];
}

export function getRecommendedRendererNames(modelName: string): string[] {
  return [...getModelAttributes(modelName).recommendedRenderers];
}

export function getRecommendedRendererName(modelName: string): string {
  return getRecommendedRendererNames(modelName)[0]!;
}

/**
 * Warns (through `warn`, default process.emitWarning) when `rendererName` is not designed for the
 * model; unknown models are not warned about. Returns whether a warning was issued.
 */
export function warnIfRendererNotRecommended(
  modelName: string,
  rendererName: string,
  warn: (msg: string) => void = (m) => process.emitWarning(m, "RendererWarning"),
): boolean {
  let recommended: string[];
  try {
    recommended = getRecommendedRendererNames(modelName);
  } catch (err) {
    if (err instanceof UnknownModelError) return false;
    throw err;
  }
  if (recommended.includes(rendererName)) return false;
  warn(`renderer ${JSON.stringify(rendererName)} is not recommended for model ${JSON.stringify(modelName)}; ` + `recommended: ${recommended.join(", ")}`);
  return true;
}

/** The renderer to use: the explicit one, else the model's recommended one, else role_colon (base-model format). */
export function resolveRendererName(modelName: string, explicit: string | null): string {
  if (explicit !== null) return explicit;
  try {
    return getRecommendedRendererName(modelName);
  } catch (err) {
    if (err instanceof UnknownModelError) return "role_colon";
    throw err;
  }
}
