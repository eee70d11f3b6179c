// `npm run bench:decode -- --peer llama.cpp`: our sampler against llama.cpp's llama-batched-bench
// on the same random-weight models of real shapes (bench/lib/shapes.ts, saved by transformers as
// bf16 safetensors), at the same weight precision and thread count, each side in its own process
// (so each peak RSS is its own): prefill tokens/s of one prompt and decode tokens/s at each stream
// count, and the ratios ours / llama.cpp (above 1 = ours faster; for memory, above 1 = ours bigger).
// Options: --shapes smollm2-135m,qwen3-0.6b --bases bf16,f32 --prompt 128 --tokens 128
// --streams 1,4,16 --reps 3 --threads 2.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ensurePythonVenv } from "../../test-e2e/pythonVenv.ts";
import type { DecodeSideResult } from "./decodeSide.ts";
import { ensureBatchedBench, ensureGguf, NODE_LLAMA_CPP, runBatchedBench, type BatchedBenchResult } from "./llamaCpp.ts";
import { cpuDescription, loadAverage } from "./machine.ts";
import { gib, lastJson, randomModelDir } from "./peers.ts";
import { benchShape } from "./shapes.ts";

interface Side {
  prefill_tps: number;
  decode_tps: Record<string, number>;
  peak_rss_bytes: number;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : "–");

export async function comparePeerDecode(argv: readonly string[]): Promise<void> {
  const opt = (name: string, fallback: string): string => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? String(argv[i + 1]) : fallback;
  };
  const peer = opt("peer", "llama.cpp");
  if (peer !== "llama.cpp") throw new Error(`--peer ${peer}: the only peer is llama.cpp`);
  const shapes = opt("shapes", "smollm2-135m,qwen3-0.6b").split(",");
  const bases = opt("bases", "bf16,f32").split(",");
  for (const b of bases) if (b !== "bf16" && b !== "f32") throw new Error(`--bases ${b}: expected bf16 and/or f32`);
  const prompt = Number(opt("prompt", "128"));
  const tokens = Number(opt("tokens", "128"));
  const streams = opt("streams", "1,4,16").split(",").map(Number);
  const reps = Number(opt("reps", "3"));
  const threads = Number(opt("threads", "2"));

  console.log(`CPU: ${cpuDescription()}; load average ${loadAverage()}`);
  const bin = ensureBatchedBench();
  const python = ensurePythonVenv(["torch", "transformers", "safetensors"]);
  console.log(
    `llama.cpp: ${bin} (from ${NODE_LLAMA_CPP}); ${threads} threads each; prompt ${prompt}, ${tokens} tokens per stream, shared prompt; medians of ${reps}`,
  );
  const oursScript = fileURLToPath(new URL("./decodeSide.ts", import.meta.url));
  const summary: string[] = [];
  const cols = ["prefill", ...streams.map((s) => `decode ${s}`)];
  for (const name of shapes) {
    const dir = randomModelDir(python, name, benchShape(name));
    for (const base of bases as ("bf16" | "f32")[]) {
      const gguf = ensureGguf(python, dir, name, base);
      const r = spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          oursScript,
          "--model-dir",
          dir,
          "--prompt",
          String(prompt),
          "--tokens",
          String(tokens),
          "--streams",
          streams.join(","),
          "--reps",
          String(reps),
        ],
        {
          encoding: "utf8",
          maxBuffer: 64 * 1024 * 1024,
          env: { ...process.env, COOKBOOK_THREADS: String(threads), COOKBOOK_BASE_WEIGHTS: base === "f32" ? "fp32" : "auto" },
        },
      );
      const ours: Side = lastJson<DecodeSideResult>(`our sampler on ${name} ${base}`, r);
      const runs: BatchedBenchResult[] = [];
      for (let i = 0; i < reps; i++) runs.push(runBatchedBench(bin, gguf, { threads, prompt, tokens, streams }));
      const theirs: Side = {
        prefill_tps: median(runs.map((x) => x.prefill_tps)),
        decode_tps: Object.fromEntries(streams.map((s) => [String(s), median(runs.map((x) => x.decode_tps[String(s)]))])),
        peak_rss_bytes: Math.max(...runs.map((x) => x.peak_rss_bytes)),
      };
      const row = (s: Side): number[] => [s.prefill_tps, ...streams.map((n) => s.decode_tps[String(n)])];
      const a = row(ours);
      const b = row(theirs);
      console.log(`\n${name} ${base} (load ${loadAverage()}; llama.cpp flash attention ${runs[0].flash_attn}, KV cache f16)`);
      console.log(`  ${"".padEnd(10)} ${cols.map((c) => c.padStart(10)).join(" ")}  peak RSS`);
      console.log(`  ${"ours".padEnd(10)} ${a.map((x) => fmt(x, 1).padStart(10)).join(" ")}  ${gib(ours.peak_rss_bytes)}   tokens/s`);
      console.log(`  ${"llama.cpp".padEnd(10)} ${b.map((x) => fmt(x, 1).padStart(10)).join(" ")}  ${gib(theirs.peak_rss_bytes)}`);
      const ratios = a.map((x, i) => x / b[i]);
      const mem = ours.peak_rss_bytes / theirs.peak_rss_bytes;
      console.log(`  ${"ratio".padEnd(10)} ${ratios.map((x) => fmt(x).padStart(10)).join(" ")}  ${fmt(mem)}×`);
      const scale = streams.slice(1).map((s, i) => `${s} streams ${fmt(a[i + 2] / a[1])}× one`);
      if (scale.length > 0) console.log(`  ours: ${scale.join(", ")}`);
      summary.push(`| ${name} | ${base} | ${ratios.map((x) => fmt(x)).join(" | ")} | ${fmt(mem)} |`);
    }
  }
  console.log(`\nratios ours / llama.cpp (tokens/s; memory: peak RSS), load at the end ${loadAverage()}`);
  console.log(`| model | weights | ${cols.join(" | ")} | peak memory |`);
  console.log(`|---|---|${cols.map(() => "---|").join("")}---|`);
  for (const l of summary) console.log(l);
}
