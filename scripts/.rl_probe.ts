import { createServiceClient } from "../src/service.ts";
import { getTokenizer } from "../src/tokenizers/index.ts";
import { getRenderer } from "../src/renderers/registry.ts";
import { ARITHMETIC_FEWSHOT } from "../src/rl/envs/arithmetic.ts";
import { gradeFirstChunk } from "../src/rl/envs/grading.ts";
import { getTextContent } from "../src/renderers/content.ts";
const svc = await createServiceClient();
const tok = await getTokenizer("tiny-chat");
const r = getRenderer("role_colon", tok);
const sc = await svc.createSamplingClient({ baseModel: "tiny-chat" });
for (const [lo, hi] of [[0, 9], [0, 20], [10, 50], [0, 100]]) {
  let ok = 0, n = 0, okg = 0;
  const jobs = [];
  for (let i = 0; i < 24; i++) {
    const x = lo + Math.floor(Math.random() * (hi - lo + 1)), y = lo + Math.floor(Math.random() * (hi - lo + 1));
    const prompt = r.buildGenerationPrompt([...ARITHMETIC_FEWSHOT, { role: "user", content: `What is ${x} + ${y}?` }]);
    jobs.push(sc.sample(prompt, 8, { stop: r.getStopSequences(), max_tokens: 8, temperature: 1 }).then((res) => { for (const s of res.sequences) { n++; if (gradeFirstChunk(getTextContent(r.parseResponse(s.tokens).message), String(x + y))) ok++; } }));
    jobs.push(sc.sample(prompt, 1, { stop: r.getStopSequences(), max_tokens: 8, temperature: 0.01 }).then((res) => { for (const s of res.sequences) { if (gradeFirstChunk(getTextContent(r.parseResponse(s.tokens).message), String(x + y))) okg++; } }));
  }
  await Promise.all(jobs);
  console.log(`[${lo},${hi}] T=1 acc ${(ok / n).toFixed(3)}  greedy ${(okg / 24).toFixed(3)}`);
}
await svc.close();
