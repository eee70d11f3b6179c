// A small chat with a checkpoint: the sampler weights of a checkpoint record, through the Tinker
// API (embedded engine by default), with the sampling options the chat screen holds. Any failure
// comes back as the engine's own message.
import { createServiceClient } from "../../service.ts";
import { getRecommendedRendererName } from "../../modelInfo.ts";
import { getRenderer, getTextContent, type Message } from "../../renderers/index.ts";
import { getTokenizer } from "../../tokenizers/index.ts";
import type { CheckpointRecord } from "../../runs/index.ts";

export interface ChatSession {
  send(history: Message[], options: ChatSamplingOptions): Promise<string>;
  close(): Promise<void>;
}

/** What `cookbook chat` offers too: temperature, nucleus sampling, a length cap, a system prompt. */
export interface ChatSamplingOptions {
  temperature: number;
  topP: number;
  maxTokens: number;
  systemPrompt: string;
}

/** base_url / model_name / renderer_name as the run's config.json recorded them. */
function configString(config: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = config?.[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The conversation sent to the model: the system prompt (when set) before the history. */
export function chatMessages(history: readonly Message[], systemPrompt: string): Message[] {
  return systemPrompt.trim() === "" ? [...history] : [{ role: "system", content: systemPrompt }, ...history];
}

export async function openChat(ckpt: CheckpointRecord, config: Record<string, unknown> | undefined): Promise<ChatSession> {
  const modelPath = typeof ckpt.sampler_path === "string" ? ckpt.sampler_path : typeof ckpt.state_path === "string" ? ckpt.state_path : undefined;
  if (!modelPath) throw new Error(`checkpoint ${ckpt.name} has neither sampler_path nor state_path`);
  const modelName = configString(config, "model_name");
  if (!modelName) throw new Error("the run's config.json has no model_name: cannot pick a tokenizer and renderer to chat");
  const baseUrl = configString(config, "base_url");
  const service = await createServiceClient(baseUrl ? { baseUrl } : {});
  try {
    const sampler = await service.createSamplingClient({ modelPath });
    const tokenizer = await getTokenizer(modelName);
    const renderer = getRenderer(configString(config, "renderer_name") ?? getRecommendedRendererName(modelName), tokenizer);
    return {
      send: async (history, options) => {
        const prompt = renderer.buildGenerationPrompt(chatMessages(history, options.systemPrompt));
        const response = await sampler.sample(prompt, 1, {
          stop: renderer.getStopSequences(),
          max_tokens: options.maxTokens,
          temperature: options.temperature,
          top_p: options.topP,
        });
        const seq = response.sequences[0];
        if (seq === undefined) throw new Error("sampler returned no sequences for a request of 1 sample");
        return getTextContent(renderer.parseResponse(seq.tokens).message);
      },
      close: () => service.close(),
    };
  } catch (err) {
    await service.close().catch(() => {});
    throw err;
  }
}
