// Messages ⇄ tokens for each model family (spec/cookbook-inventory.md §2).
export * from "./types.ts";
export { Renderer, lastUserIndex, parseResponseForStopToken, requireSingleToken } from "./base.ts";
export {
  ensureList,
  ensureText,
  formatContentAsString,
  getTextContent,
  classifyParseFailure,
  hasThinking,
  UNTERMINATED_TOOL_BLOCK_ERROR,
  type ParseFailureKind,
  parseContentBlocks,
  parseThinkBlocks,
  removeThinking,
} from "./content.ts";
export { pythonJsonDumps } from "./pyjson.ts";
export { RoleColonRenderer } from "./roleColon.ts";
export { Llama3Renderer } from "./llama3.ts";
export { Qwen3Renderer, Qwen3DisableThinkingRenderer, Qwen3InstructRenderer } from "./qwen3.ts";
export { DeepSeekV3DisableThinkingRenderer, DeepSeekV3ThinkingRenderer } from "./deepseekV3.ts";
export { GptOssRenderer, type GptOssOptions, type ReasoningEffort } from "./gptOss.ts";
export { KimiK2Renderer, KIMI_DEFAULT_SYSTEM_PROMPT } from "./kimiK2.ts";
export {
  getRegisteredRendererNames,
  getRenderer,
  isRendererRegistered,
  registerRenderer,
  unregisterRenderer,
  type RendererFactory,
} from "./registry.ts";
