// Renderer registry, model_info recommendations and the errors users meet first.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  getRegisteredRendererNames,
  getRenderer,
  isRendererRegistered,
  Llama3Renderer,
  registerRenderer,
  RendererError,
  unregisterRenderer,
} from "../../src/renderers/index.ts";
import {
  getModelAttributes,
  getRecommendedRendererName,
  getRecommendedRendererNames,
  registerModelAttributes,
  unregisterModelAttributes,
  UnknownModelError,
  warnIfRendererNotRecommended,
} from "../../src/modelInfo.ts";
import { packagedTokenizer } from "./helpers.ts";
import { kimiTokenizer } from "./setups.ts";

test("the built-in renderer names of the cookbook are registered", () => {
  const names = getRegisteredRendererNames();
  for (const n of [
    "role_colon",
    "llama3",
    "qwen3",
    "qwen3_disable_thinking",
    "qwen3_instruct",
    "deepseekv3",
    "deepseekv3_disable_thinking",
    "deepseekv3_thinking",
    "gpt_oss_no_sysprompt",
    "gpt_oss_low_reasoning",
    "gpt_oss_medium_reasoning",
    "gpt_oss_high_reasoning",
    "kimi_k2",
  ]) {
    assert.ok(names.includes(n), n);
    assert.ok(isRendererRegistered(n));
  }
  assert.equal(isRendererRegistered("kimi"), false);
});

test("an unknown renderer name is an error listing the known ones", () => {
  assert.throws(
    () => getRenderer("kimi", packagedTokenizer("qwen3")),
    (err: Error) => {
      assert.ok(err instanceof RendererError);
      assert.match(err.message, /unknown renderer "kimi"/);
      assert.match(err.message, /kimi_k2/);
      assert.match(err.message, /role_colon/);
      return true;
    },
  );
});

test("custom renderers register, take precedence, carry their name and unregister", () => {
  registerRenderer("my_llama", (t, n) => new Llama3Renderer(t, n));
  try {
    const r = getRenderer("my_llama", packagedTokenizer("llama3_1"));
    assert.equal(r.rendererName, "my_llama");
    assert.ok(getRegisteredRendererNames().includes("my_llama"));
  } finally {
    assert.equal(unregisterRenderer("my_llama"), true);
  }
  assert.equal(isRendererRegistered("my_llama"), false);
  assert.equal(unregisterRenderer("my_llama"), false);
});

test("a tokenizer lacking a token the renderer needs is a clear error", () => {
  assert.throws(() => getRenderer("llama3", packagedTokenizer("qwen3")), /llama3 needs the special token "<\|begin_of_text\|>".*"qwen3"/);
  assert.throws(() => getRenderer("qwen3", kimiTokenizer()), /qwen3 needs the special token "<\|im_start\|>"/);
  assert.throws(() => getRenderer("gpt_oss_no_sysprompt", packagedTokenizer("qwen3")), /needs the special token "<\|start\|>"/);
  assert.throws(() => getRenderer("deepseekv3", packagedTokenizer("llama3")), /needs the special token "<｜begin▁of▁sentence｜>"/);
  assert.throws(() => getRenderer("kimi_k2", packagedTokenizer("llama3")), /kimi_k2 needs the special token/);
});

test("llama3 refuses reasoning parts it cannot write", () => {
  const r = getRenderer("llama3", packagedTokenizer("llama3_1"));
  assert.throws(() => r.buildGenerationPrompt([{ role: "assistant", content: [{ type: "thinking", thinking: "x" }] }]), /text-only content/);
});

test("model_info: recommended renderers, suffixes and unknown models", () => {
  assert.equal(getRecommendedRendererName("meta-llama/Llama-3.1-8B-Instruct"), "llama3");
  assert.equal(getRecommendedRendererName("meta-llama/Llama-3.2-1B"), "role_colon");
  assert.deepEqual(getRecommendedRendererNames("Qwen/Qwen3-8B"), ["qwen3", "qwen3_disable_thinking"]);
  assert.equal(getRecommendedRendererName("Qwen/Qwen3-30B-A3B-Instruct-2507"), "qwen3_instruct");
  assert.deepEqual(getRecommendedRendererNames("deepseek-ai/DeepSeek-V3.1"), ["deepseekv3", "deepseekv3_thinking"]);
  assert.deepEqual(getRecommendedRendererNames("openai/gpt-oss-20b"), ["gpt_oss_no_sysprompt", "gpt_oss_medium_reasoning"]);
  assert.equal(getRecommendedRendererName("moonshotai/Kimi-K2-Thinking"), "kimi_k2");
  assert.equal(getRecommendedRendererName("Qwen/Qwen3-8B:peft:131072"), "qwen3");
  assert.equal(getModelAttributes("Qwen/Qwen3.5-4B").isVl, true);
  assert.throws(() => getModelAttributes("Qwen3-8B"), /org\/model/);
  assert.throws(
    () => getModelAttributes("acme/Model-1"),
    (e: Error) => e instanceof UnknownModelError && /unknown organization "acme"/.test(e.message),
  );
  assert.throws(() => getModelAttributes("Qwen/Qwen9-1B"), /known Qwen models: .*Qwen3-8B/);
  registerModelAttributes("tiny-llama", { organization: "local", versionStr: "0", sizeStr: "tiny", isChat: true, recommendedRenderers: ["llama3"] });
  try {
    assert.equal(getRecommendedRendererName("tiny-llama"), "llama3");
  } finally {
    unregisterModelAttributes("tiny-llama");
  }
});

test("warnIfRendererNotRecommended warns only for a known model with another renderer", () => {
  const warnings: string[] = [];
  const warn = (m: string): void => {
    warnings.push(m);
  };
  assert.equal(warnIfRendererNotRecommended("Qwen/Qwen3-8B", "qwen3_disable_thinking", warn), false);
  assert.equal(warnIfRendererNotRecommended("Qwen/Qwen3-8B", "llama3", warn), true);
  assert.equal(warnIfRendererNotRecommended("acme/whatever", "llama3", warn), false);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /"llama3" is not recommended for model "Qwen\/Qwen3-8B"; recommended: qwen3, qwen3_disable_thinking/);
});
