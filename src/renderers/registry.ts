// Renderer names → factories (docs/renderers.md#renderers-srcrenderers), open to custom renderers.
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Renderer } from "./base.ts";
import { DeepSeekV3DisableThinkingRenderer, DeepSeekV3ThinkingRenderer } from "./deepseekV3.ts";
import { GptOssRenderer } from "./gptOss.ts";
import { KimiK2Renderer } from "./kimiK2.ts";
import { KimiK25DisableThinkingRenderer, KimiK25Renderer, KimiK26PreserveThinkingRenderer } from "./kimiK25.ts";
import { Nemotron3DisableThinkingRenderer, Nemotron3Renderer, Nemotron3UltraDisableThinkingRenderer, Nemotron3UltraRenderer } from "./nemotron3.ts";
import { Qwen3_8DisableThinkingRenderer, Qwen3_8Renderer } from "./qwen38.ts";
import { Qwen3_5DisableThinkingRenderer, Qwen3_5Renderer, Qwen3VLInstructRenderer, Qwen3VLRenderer } from "./qwenVl.ts";
import { Llama3Renderer } from "./llama3.ts";
import { Qwen3DisableThinkingRenderer, Qwen3InstructRenderer, Qwen3Renderer } from "./qwen3.ts";
import { RoleColonRenderer } from "./roleColon.ts";
import { TmlV0Renderer } from "./tmlV0.ts";
import { RendererError } from "./types.ts";

export type RendererFactory = (tokenizer: Tokenizer, name: string) => Renderer;

const BUILTIN: ReadonlyMap<string, RendererFactory> = new Map<string, RendererFactory>([
  ["role_colon", (t, n) => new RoleColonRenderer(t, n)],
  ["llama3", (t, n) => new Llama3Renderer(t, n)],
  ["qwen3", (t, n) => new Qwen3Renderer(t, n)],
  ["qwen3_disable_thinking", (t, n) => new Qwen3DisableThinkingRenderer(t, n)],
  ["qwen3_instruct", (t, n) => new Qwen3InstructRenderer(t, n)],
  ["deepseekv3", (t, n) => new DeepSeekV3DisableThinkingRenderer(t, n)],
  ["deepseekv3_disable_thinking", (t, n) => new DeepSeekV3DisableThinkingRenderer(t, n)],
  ["deepseekv3_thinking", (t, n) => new DeepSeekV3ThinkingRenderer(t, n)],
  ["qwen3_vl", (t, n) => new Qwen3VLRenderer(t, n)],
  ["qwen3_vl_instruct", (t, n) => new Qwen3VLInstructRenderer(t, n)],
  ["qwen3_5", (t, n) => new Qwen3_5Renderer(t, n)],
  ["qwen3_5_disable_thinking", (t, n) => new Qwen3_5DisableThinkingRenderer(t, n)],
  ["qwen3_8_xhigh_reasoning", (t, n) => new Qwen3_8Renderer(t, n, { reasoningEffort: "xhigh" })],
  ["qwen3_8_medium_reasoning", (t, n) => new Qwen3_8Renderer(t, n, { reasoningEffort: "medium" })],
  ["qwen3_8_low_reasoning", (t, n) => new Qwen3_8Renderer(t, n, { reasoningEffort: "low" })],
  ["qwen3_8_disable_thinking", (t, n) => new Qwen3_8DisableThinkingRenderer(t, n)],
  ["kimi_k2", (t, n) => new KimiK2Renderer(t, n)],
  ["kimi_k25", (t, n) => new KimiK25Renderer(t, n)],
  ["kimi_k25_disable_thinking", (t, n) => new KimiK25DisableThinkingRenderer(t, n)],
  ["kimi_k26", (t, n) => new KimiK25Renderer(t, n)],
  ["kimi_k26_disable_thinking", (t, n) => new KimiK25DisableThinkingRenderer(t, n)],
  ["kimi_k26_preserve_thinking", (t, n) => new KimiK26PreserveThinkingRenderer(t, n)],
  ["nemotron3", (t, n) => new Nemotron3Renderer(t, n)],
  ["nemotron3_disable_thinking", (t, n) => new Nemotron3DisableThinkingRenderer(t, n)],
  ["nemotron3_low_thinking", (t, n) => new Nemotron3Renderer(t, n, { effortSuffix: "{reasoning effort: low}" })],
  ["nemotron3_preserve_thinking", (t, n) => new Nemotron3Renderer(t, n, { stripThinkingFromHistory: false })],
  ["nemotron3_ultra", (t, n) => new Nemotron3UltraRenderer(t, n)],
  ["nemotron3_ultra_disable_thinking", (t, n) => new Nemotron3UltraDisableThinkingRenderer(t, n)],
  ["nemotron3_ultra_medium_thinking", (t, n) => new Nemotron3UltraRenderer(t, n, { effortSuffix: "{reasoning effort: efficient}" })],
  ["nemotron3_ultra_preserve_thinking", (t, n) => new Nemotron3UltraRenderer(t, n, { stripThinkingFromHistory: false })],
  ["gpt_oss_no_sysprompt", (t, n) => new GptOssRenderer(t, n)],
  ["gpt_oss_low_reasoning", (t, n) => new GptOssRenderer(t, n, { reasoningEffort: "low" })],
  ["gpt_oss_medium_reasoning", (t, n) => new GptOssRenderer(t, n, { reasoningEffort: "medium" })],
  ["gpt_oss_high_reasoning", (t, n) => new GptOssRenderer(t, n, { reasoningEffort: "high" })],
  ["tml_v0", (t, n) => new TmlV0Renderer(t, n)],
]);

const custom = new Map<string, RendererFactory>();

/** Adds (or replaces) a named renderer; custom names take precedence over built-in ones. */
export function registerRenderer(name: string, factory: RendererFactory): void {
  custom.set(name, factory);
}

/** Removes a custom renderer; false when no custom renderer had that name. */
export function unregisterRenderer(name: string): boolean {
  return custom.delete(name);
}

export function isRendererRegistered(name: string): boolean {
  return custom.has(name) || BUILTIN.has(name);
}

export function getRegisteredRendererNames(): string[] {
  return [...new Set([...BUILTIN.keys(), ...custom.keys()])];
}

export function getRenderer(name: string, tokenizer: Tokenizer): Renderer {
  const factory = custom.get(name) ?? BUILTIN.get(name);
  if (factory === undefined) {
    throw new RendererError(`unknown renderer ${JSON.stringify(name)}; known renderers: ${getRegisteredRendererNames().join(", ")}`);
  }
  const renderer = factory(tokenizer, name);
  renderer.rendererName = name;
  return renderer;
}
