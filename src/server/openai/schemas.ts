// OpenAI request bodies as `cookbook serve` reads them: the fields it acts on, typed; fields it
// does not use (user, logit_bias, frequency_penalty…) are accepted and ignored, as other
// OpenAI-compatible servers do, so agent harnesses and LiteLLM can send what they always send.
import { z } from "zod";

const Stop = z.union([z.string(), z.array(z.string()).max(16)]).nullish();

/** What every sampling request shares. */
const samplingFields = {
  model: z.string().min(1),
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  n: z.number().int().min(1).max(16).nullish(),
  seed: z.number().int().nullish(),
  stop: Stop,
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
};

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const ContentPart = z.union([TextPart, z.object({ type: z.string() }).loose()]);

const ToolCall = z.object({
  id: z.string().nullish(),
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

export const ChatMessageSchema = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(ContentPart)]).nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(ToolCall).nullish(),
  tool_call_id: z.string().nullish(),
  reasoning_content: z.string().nullish(),
});
export type ChatMessage = z.output<typeof ChatMessageSchema>;

export const ToolSchema = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});

export const ChatCompletionRequestSchema = z.object({
  ...samplingFields,
  messages: z.array(ChatMessageSchema).min(1, "messages must hold at least one message"),
  max_completion_tokens: z.number().int().positive().nullish(),
  tools: z.array(ToolSchema).nullish(),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function") }).loose()]).nullish(),
});
export type ChatCompletionRequest = z.output<typeof ChatCompletionRequestSchema>;

export const CompletionRequestSchema = z.object({
  ...samplingFields,
  prompt: z.union([z.string(), z.array(z.string()).length(1), z.array(z.number().int().min(0)).min(1)]),
});
export type CompletionRequest = z.output<typeof CompletionRequestSchema>;
