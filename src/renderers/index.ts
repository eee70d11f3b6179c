// Messages ⇄ tokens for each model family (docs/renderers.md#renderers-srcrenderers).
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
export { KimiK25Renderer, KimiK25DisableThinkingRenderer, KimiK26PreserveThinkingRenderer, type KimiK25Options } from "./kimiK25.ts";
export { encodeToolsTypeScript } from "./kimiToolsTs.ts";
export {
  Qwen3VLRenderer,
  Qwen3VLInstructRenderer,
  Qwen3_5Renderer,
  Qwen3_5DisableThinkingRenderer,
  parseXmlToolCall,
  type QwenVlOptions,
} from "./qwenVl.ts";
export { Qwen3_8Renderer, Qwen3_8DisableThinkingRenderer, QWEN3_8_EFFORT_INSTRUCTIONS, type Qwen3_8Options, type Qwen3_8ReasoningEffort } from "./qwen38.ts";
export {
  Nemotron3Renderer,
  Nemotron3DisableThinkingRenderer,
  Nemotron3UltraRenderer,
  Nemotron3UltraDisableThinkingRenderer,
  nemotronToolDeclaration,
  type Nemotron3Options,
} from "./nemotron3.ts";
export {
  decodeImage,
  imageToChunk,
  kimiVisionTokenCount,
  qwenVisionTokenCount,
  KIMI_K25_VISION,
  QWEN3_VL_VISION,
  type ImageTokenCounter,
  type KimiVisionConfig,
  type QwenVisionConfig,
} from "./images.ts";
export {
  TmlV0Renderer,
  registerTmlV0Backend,
  withEffortMessage,
  TML_DEFAULT_EFFORT,
  TML_EFFORT_ROLE,
  type TmlV0Backend,
  type TmlV0BackendFactory,
} from "./tmlV0.ts";
export { ResponseStreamParser, Utf8TokenDecoder, type StreamDelta, type StreamFinish, type StreamingMarkup } from "./streaming.ts";
export {
  getRegisteredRendererNames,
  getRenderer,
  isRendererRegistered,
  registerRenderer,
  unregisterRenderer,
  type RendererFactory,
} from "./registry.ts";
