// model_info and the renderer registry agree: choosing any listed model never points at a
// missing renderer, and every renderer family is recommended for some model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRegisteredRendererNames, isRendererRegistered } from "../../src/renderers/index.ts";
import { getModelAttributes, getRecommendedRendererNames, listKnownModels, resolveRendererName } from "../../src/modelInfo.ts";

/** The cookbook's renderer table (docs/renderers.md#renderers-srcrenderers). */
const COOKBOOK_NAMES = [
  "role_colon",
  "llama3",
  "qwen3",
  "qwen3_disable_thinking",
  "qwen3_instruct",
  "qwen3_vl",
  "qwen3_vl_instruct",
  "qwen3_5",
  "qwen3_5_disable_thinking",
  "qwen3_8_xhigh_reasoning",
  "qwen3_8_medium_reasoning",
  "qwen3_8_low_reasoning",
  "qwen3_8_disable_thinking",
  "deepseekv3",
  "deepseekv3_disable_thinking",
  "deepseekv3_thinking",
  "kimi_k2",
  "kimi_k25",
  "kimi_k26",
  "kimi_k25_disable_thinking",
  "kimi_k26_disable_thinking",
  "kimi_k26_preserve_thinking",
  "nemotron3",
  "nemotron3_disable_thinking",
  "nemotron3_low_thinking",
  "nemotron3_preserve_thinking",
  "nemotron3_ultra",
  "nemotron3_ultra_disable_thinking",
  "nemotron3_ultra_medium_thinking",
  "nemotron3_ultra_preserve_thinking",
  "gpt_oss_no_sysprompt",
  "gpt_oss_low_reasoning",
  "gpt_oss_medium_reasoning",
  "gpt_oss_high_reasoning",
  "tml_v0",
];

/** A renderer's family: its name without the thinking / effort / instruct variant suffix. */
function family(name: string): string {
  return name.replace(
    /_(disable_thinking|preserve_thinking|low_thinking|medium_thinking|thinking|instruct|no_sysprompt|(xhigh|medium|low|high)_reasoning)$/,
    "",
  );
}

test("every name of the cookbook's renderer table is registered, and nothing else is built in", () => {
  for (const n of COOKBOOK_NAMES) assert.ok(isRendererRegistered(n), `${n} is not registered`);
  assert.deepEqual([...getRegisteredRendererNames()].sort(), [...COOKBOOK_NAMES].sort());
});

test("every model's recommended renderers are registered", () => {
  const models = listKnownModels();
  // The model table of docs/cookbook-parity.md#model-to-renderer-table.
  for (const m of [
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.3-70B-Instruct",
    "meta-llama/Llama-3.2-1B",
    "meta-llama/Llama-3.2-3B",
    "meta-llama/Llama-3.1-8B",
    "meta-llama/Llama-3.1-70B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-8B-Base",
    "Qwen/Qwen3-30B-A3B-Base",
    "Qwen/Qwen3.5-9B-Base",
    "Qwen/Qwen3.5-35B-A3B-Base",
    "deepseek-ai/DeepSeek-V3.1-Base",
    "Qwen/Qwen3-4B-Instruct-2507",
    "Qwen/Qwen3-30B-A3B-Instruct-2507",
    "Qwen/Qwen3-235B-A22B-Instruct-2507",
    "Qwen/Qwen3-VL-30B-A3B-Instruct",
    "Qwen/Qwen3-VL-235B-A22B-Instruct",
    "Qwen/Qwen3.5-4B",
    "Qwen/Qwen3.5-9B",
    "Qwen/Qwen3.5-27B",
    "Qwen/Qwen3.5-35B-A3B",
    "Qwen/Qwen3.5-397B-A17B",
    "Qwen/Qwen3.6-27B",
    "Qwen/Qwen3.6-35B-A3B",
    "Qwen/Qwen3.8-27B",
    "deepseek-ai/DeepSeek-V3.1",
    "openai/gpt-oss-20b",
    "openai/gpt-oss-120b",
    "moonshotai/Kimi-K2-Thinking",
    "moonshotai/Kimi-K2.5",
    "moonshotai/Kimi-K2.6",
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16",
  ]) {
    assert.ok(models.includes(m), `${m} is missing from model info`);
  }
  for (const model of models) {
    const names = getRecommendedRendererNames(model);
    assert.ok(names.length > 0, `${model} recommends no renderer`);
    for (const n of names) assert.ok(isRendererRegistered(n), `${model} recommends ${n}, which is not registered`);
    // resolveRendererName picks the first recommendation.
    assert.equal(resolveRendererName(model, null), names[0]);
  }
});

test("every registered renderer family is recommended by some model", () => {
  const recommended = new Set(listKnownModels().flatMap((m) => getRecommendedRendererNames(m).map(family)));
  for (const n of getRegisteredRendererNames()) assert.ok(recommended.has(family(n)), `no model recommends the ${family(n)} family (${n})`);
});

test("vision-language models are marked, and the VL renderers are what they recommend", () => {
  for (const m of [
    "Qwen/Qwen3-VL-30B-A3B-Instruct",
    "Qwen/Qwen3.5-4B",
    "Qwen/Qwen3.6-27B",
    "Qwen/Qwen3.8-27B",
    "moonshotai/Kimi-K2.5",
    "moonshotai/Kimi-K2.6",
  ]) {
    assert.equal(getModelAttributes(m).isVl, true, m);
  }
  assert.equal(getModelAttributes("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16").isVl ?? false, false);
  assert.deepEqual(getRecommendedRendererNames("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"), [
    "nemotron3",
    "nemotron3_disable_thinking",
    "nemotron3_preserve_thinking",
    "nemotron3_low_thinking",
  ]);
  assert.equal(resolveRendererName("thinkingmachines/Inkling-1", null), "tml_v0");
});
