// A LoRA of the shipped tiny-chat model trained for a few steps in a temporary store, for the
// export and chat tests (and the Python end-to-end check of exports).
import { createEmbeddedServiceClient, type EmbeddedServiceClient } from "../../src/engine/index.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import type { Datum } from "../../src/tinker/types.ts";

export interface TrainedTinyChat {
  service: EmbeddedServiceClient;
  samplerPath: string;
  statePath: string;
  /** Token sequences to score (not the training ones). */
  probes: number[][];
}

function datum(tokens: number[]): Datum {
  const input = tokens.slice(0, -1);
  const targets = tokens.slice(1);
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: input }] },
    loss_fn_inputs: {
      target_tokens: { data: targets, dtype: "int64", shape: [targets.length] },
      weights: { data: targets.map(() => 1), dtype: "float32", shape: [targets.length] },
    },
  };
}

export async function trainTinyChat(storeDir: string, options: { steps?: number; rank?: number } = {}): Promise<TrainedTinyChat> {
  const service = createEmbeddedServiceClient({ storeDir });
  const tokenizer = await getTokenizer("tiny-chat");
  const texts = ["User: What is 2+3?\n\nAssistant: Arr, 5 it be!\n\n", "User: Hello there\n\nAssistant: Ahoy, matey!\n\n"];
  const data = texts.map((t) => datum(tokenizer.encode(t)));
  const tc = await service.createLoraTrainingClient("tiny-chat", { rank: options.rank ?? 4, seed: 7 });
  for (let i = 0; i < (options.steps ?? 4); i++) {
    await tc.forwardBackward(data, "cross_entropy");
    await (await tc.optimStep({ learning_rate: 2e-2 })).result();
  }
  const samplerPath = (await (await tc.saveWeightsForSampler("export-test")).result()).path;
  const statePath = (await (await tc.saveState("export-test")).result()).path;
  const probes = ["User: What is 4+4?\n\nAssistant: Arr, 8!\n\n", "User: Good morning\n\nAssistant: Ahoy there, friend."].map((t) => tokenizer.encode(t));
  return { service, samplerPath, statePath, probes };
}
