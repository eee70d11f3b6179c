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

export interface Setup {
  renderer: string;
  tokenizer: () => Tokenizer;
  thinking: boolean;
  tools: boolean;
  /** Reasoning is kept when it is the produced turn (false: dropped, e.g. deepseekv3). */
  keepsThinking: boolean;
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
];
