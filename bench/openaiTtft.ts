// Time to first token of `cookbook serve`'s OpenAI chat endpoint, measured with the `openai`
// client the way an agent harness would call it: the first request (the sampler and tokenizer
// load), then the median of warm streamed requests, and the whole-reply time of the same request
// unstreamed. Usage: npm run bench:openai_ttft [-- --model tiny-chat --runs 9 --max-tokens 64]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { startServer } from "../src/server/index.ts";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string): string => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : fallback);
const model = arg("model", "tiny-chat");
const runs = Number(arg("runs", "9"));
const maxTokens = Number(arg("max-tokens", "64"));

const home = mkdtempSync(join(tmpdir(), "bench-openai-"));
const server = await startServer({ port: 0, storeDir: join(home, "checkpoints") }, { log: () => undefined });
const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused-on-loopback", maxRetries: 0 });
const messages = [{ role: "user" as const, content: "Tell me about the sea." }];

async function streamed(): Promise<{ ttft: number; total: number; chars: number }> {
  const t0 = performance.now();
  const stream = await client.chat.completions.create({ model, messages, max_tokens: maxTokens, temperature: 0.7, seed: 1, stream: true });
  let ttft = -1;
  let chars = 0;
  for await (const c of stream) {
    const piece = c.choices[0]?.delta.content ?? "";
    if (piece !== "" && ttft < 0) ttft = performance.now() - t0;
    chars += piece.length;
  }
  return { ttft, total: performance.now() - t0, chars };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  const cold = await streamed();
  const warm = [];
  for (let i = 0; i < runs; i++) warm.push(await streamed());
  const whole = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await client.chat.completions.create({ model, messages, max_tokens: maxTokens, temperature: 0.7, seed: 1 });
    whole.push(performance.now() - t0);
  }
  console.log(`model ${model}, max_tokens ${maxTokens}, ${runs} warm runs, load average ${loadavg()[0]!.toFixed(2)}`);
  console.log(`first request: time to first token ${cold.ttft.toFixed(0)} ms (loads the sampler and tokenizer), whole reply ${cold.total.toFixed(0)} ms`);
  console.log(
    `warm streamed: time to first token median ${median(warm.map((w) => w.ttft)).toFixed(0)} ms, whole reply median ${median(warm.map((w) => w.total)).toFixed(0)} ms`,
  );
  console.log(`warm unstreamed: whole reply median ${median(whole).toFixed(0)} ms`);
} finally {
  await server.close();
  rmSync(home, { recursive: true, force: true });
}
