import OpenAI from "openai";
import { startServer } from "./src/server/index.ts";
const server = await startServer({ port: 0, storeDir: "/tmp/remote/store", kernels: "native" }, { log: (l) => console.error("[srv]", l) });
const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none" });
try {
  const models = await client.models.list();
  console.log("models", models.data.map((m) => m.id));
  const t0 = Date.now();
  const r = await client.chat.completions.create({ model: "tiny-chat", messages: [{ role: "user", content: "What is 2 + 3?" }], max_tokens: 20, temperature: 0 });
  console.log("chat", Date.now() - t0, "ms", JSON.stringify(r).slice(0, 400));
  const t1 = Date.now();
  const stream = await client.chat.completions.create({ model: "tiny-chat", messages: [{ role: "user", content: "What is 2 + 3?" }], max_tokens: 20, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let first = 0; let text = "";
  for await (const c of stream) { if (!first && c.choices[0]?.delta?.content) first = Date.now() - t1; text += c.choices[0]?.delta?.content ?? ""; if (c.usage) console.log("usage", c.usage, c.choices[0]?.finish_reason); if (c.choices[0]?.finish_reason) console.log("finish", c.choices[0].finish_reason); }
  console.log("stream ttft", first, "text", JSON.stringify(text));
  const comp = await client.completions.create({ model: "tiny-chat", prompt: "User: hi\n\nAssistant:", max_tokens: 10, temperature: 0 });
  console.log("completion", JSON.stringify(comp.choices));
  try { await client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }); } catch (e) { console.log("err", (e as any).status, (e as Error).message); }
  try { await client.chat.completions.create({ model: "tiny-chat", messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "f", parameters: {} } }] }); } catch (e) { console.log("err", (e as any).status, (e as Error).message); }
} finally { await server.close(); }
