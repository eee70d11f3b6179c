// A small chat with a checkpoint: the sampler weights of a checkpoint record, through the Tinker
// API (embedded engine by default). Any failure comes back as the engine's own message.
import { createServiceClient } from "../../service.ts";
import { TinkerMessageCompleter } from "../../completers.ts";
import { getRecommendedRendererName } from "../../modelInfo.ts";
import { getRenderer, getTextContent, type Message } from "../../renderers/index.ts";
import { getTokenizer } from "../../tokenizers/index.ts";
import type { CheckpointRecord } from "../../runs/index.ts";
import type { RLRenderer } from "../../renderers/policyRenderer.ts";

export interface ChatSession {
  send(history: Message[]): Promise<string>;
  close(): Promise<void>;
}

/** base_url / model_name / renderer_name as the run's config.json recorded them. */
function configString(config: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = config?.[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

export async function openChat(ckpt: CheckpointRecord, config: Record<string, unknown> | undefined, maxTokens = 128): Promise<ChatSession> {
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
    const completer = new TinkerMessageCompleter(sampler, renderer as unknown as RLRenderer, maxTokens, { temperature: 0.7 });
    return {
      send: async (history) => getTextContent((await completer.complete(history)) as Message),
      close: () => service.close(),
    };
  } catch (err) {
    await service.close().catch(() => {});
    throw err;
  }
}
