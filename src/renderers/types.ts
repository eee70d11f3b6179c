// The message model shared by every renderer (docs/cookbook-parity.md#message-model). zod schemas are
// the single source: the types are inferred from them and datasets validate JSONL rows with them.
// Field names stay snake_case so conversation files written for the Python cookbook load as-is.
import { z } from "zod";

export const TextPartSchema = z.object({ type: z.literal("text"), text: z.string() });
export const ThinkingPartSchema = z.object({ type: z.literal("thinking"), thinking: z.string() });
/**
 * An image in a message: a data URI (data:image/png;base64,…), a local file path or file:// URL.
 * Remote URLs are refused at render time (nothing is downloaded while rendering).
 */
export const ImagePartSchema = z.object({ type: z.literal("image"), image: z.string() });
export const ContentPartSchema = z.discriminatedUnion("type", [TextPartSchema, ThinkingPartSchema, ImagePartSchema]);
export const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

export const ToolCallSchema = z.strictObject({
  type: z.literal("function").default("function"),
  id: z.string().nullish(),
  function: z.strictObject({
    name: z.string(),
    /** JSON text of the arguments object. */
    arguments: z.string(),
  }),
});
export const UnparsedToolCallSchema = z.strictObject({ raw_text: z.string(), error: z.string() });

export const MessageSchema = z.object({
  /** Free string: system, user, assistant, tool (plus developer for GPT-OSS, tool_declare for Kimi). */
  role: z.string(),
  content: ContentSchema,
  tool_calls: z.array(ToolCallSchema).optional(),
  unparsed_tool_calls: z.array(UnparsedToolCallSchema).optional(),
  /** Only with train_on_what=customized: whether this message carries loss. */
  trainable: z.boolean().optional(),
  /** For tool results: the id of the call this answers (Kimi renders it). */
  tool_call_id: z.string().optional(),
  /** For tool results: the function name (GPT-OSS requires it, Kimi uses it). */
  name: z.string().optional(),
});

export const ToolSpecSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});

export type TextPart = z.infer<typeof TextPartSchema>;
export type ThinkingPart = z.infer<typeof ThinkingPartSchema>;
export type ImagePart = z.infer<typeof ImagePartSchema>;
export type ContentPart = z.infer<typeof ContentPartSchema>;
export type Content = z.infer<typeof ContentSchema>;
export type ToolCall = z.infer<typeof ToolCallSchema>;
export type UnparsedToolCall = z.infer<typeof UnparsedToolCallSchema>;
export type Message = z.infer<typeof MessageSchema>;
export type ToolSpec = z.infer<typeof ToolSpecSchema>;
export type Role = string;

export const TRAIN_ON_WHAT = [
  "last_assistant_message",
  "last_assistant_turn",
  "all_assistant_messages",
  "all_messages",
  "all_tokens",
  "all_user_and_system_messages",
  "customized",
] as const;
export const TrainOnWhatSchema = z.enum(TRAIN_ON_WHAT);
export type TrainOnWhat = z.infer<typeof TrainOnWhatSchema>;

/** How a sampled response ended: the renderer's stop, an EOS fallback, or neither/too many. */
export type ParseTermination = "stop_sequence" | "eos" | "malformed";
export function isCleanTermination(t: ParseTermination): boolean {
  return t !== "malformed";
}

export interface ParsedResponse {
  message: Message;
  termination: ParseTermination;
}

/** Where a message sits in the conversation being rendered. */
export interface RenderContext {
  idx: number;
  isLast: boolean;
  prevMessage: Message | null;
  nextMessage: Message | null;
  /** Index of the last user message, -1 if none. */
  lastUserIndex: number;
  /** Whether the message belongs to the turn the model is asked to produce. */
  inLastAssistantTurn: boolean;
}

/**
 * A message split for loss masking: `header` (role markers, weight 0 unless all_tokens), `output`
 * (content + end of turn, the trainable part), and `stopOverlap` (role_colon only: the "User:"
 * that completes its stop string, appended after the final message).
 */
export interface RenderedMessage {
  header: number[];
  /** Token runs, and image chunks for vision-language renderers. */
  output: OutputChunk[];
  stopOverlap?: number[];
}

/** A run of tokens, or an image the server expands into `expected_tokens` vision positions. */
export type OutputChunk = number[] | import("../tinker/types.ts").ModelInputChunk;

export interface SupervisedExample {
  modelInput: import("../tinker/types.ts").ModelInput;
  /** One weight per token of modelInput. */
  weights: Float32Array;
}

export class RendererError extends Error {
  override name = "RendererError";
}
