// `npm run bench:decode -- --peer llama.cpp|torch`: our sampler against llama.cpp's
// llama-batched-bench, or against PyTorch (transformers' generate(), bench/torch_decode.py), on the
// same random-weight models of real shapes (bench/lib/shapes.ts, saved by transformers as bf16
// safetensors), at the same weight precision and thread count, each side in its own process (so
// each peak RSS is its own): prefill tokens/s of one prompt and decode tokens/s at each stream
// count, and the ratios ours / peer (above 1 = ours faster; for memory, above 1 = ours bigger).
// Options: --shapes smollm2-135m,qwen3-0.6b --bases bf16,f32 --prompt 128 --tokens 128
// --streams 1,4,16 --reps 3 --threads 2.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { ensurePythonVenv } from "../../test-e2e/pythonVenv.ts";
import type { DecodeSideResult } from "./decodeSide.ts";
import { ensureBatchedBench, ensureGguf, NODE_LLAMA_CPP, runBatchedBench, type BatchedBenchResult } from "./llamaCpp.ts";
import { cpuDescription, loadAverage } from "./machine.ts";
import { gib, lastJson, randomModelDir } from "./peers.ts";

export interface Side {
  prefill_tps: number;
  decode_tps: Record<string, number>;
  peak_rss_bytes: number;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : "–");

/** Runs one side's script in its own process (so its peak RSS is its own) and parses its JSON line. */
function runSide<T>(what: string, command: string, args: string[], env: NodeJS.ProcessEnv): T {
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } });
  return lastJson<T>(what, r);
}

export type DecodePeer = "llama.cpp" | "torch";

export interface DecodeOptions {
  prompt: number;
  tokens: number;
  streams: number[];
  reps: number;
  threads: number;
}

export interface DecodeComparison {
  ours: Side;
  theirs: Side;
  /** ours / theirs: prefill, then decode at each stream count. */
  ratios: number[];
  memoryRatio: number;
}

/** Both sides on one shape and weight precision, printed as a small table and returned. */
export function compareDecode(python: string, peer: DecodePeer, name: string, base: "bf16" | "f32", o: DecodeOptions): DecodeComparison {
  const dir = randomModelDir(python, name);
  const sideArgs = ["--prompt", String(o.prompt), "--tokens", String(o.tokens), "--streams", o.streams.join(","), "--reps", String(o.reps)];
  const ours: Side = runSide<DecodeSideResult>(`our sampler on ${name} ${base}`, process.execPath, [compiledSide(), "--model-dir", dir, ...sideArgs], {
    COOKBOOK_THREADS: String(o.threads),
    COOKBOOK_BASE_WEIGHTS: base === "f32" ? "fp32" : "auto",
  });
  let theirs: Side;
  let notes: string;
  if (peer === "llama.cpp") {
    const bin = ensureBatchedBench();
    const gguf = ensureGguf(python, dir, name, base);
    const runs: BatchedBenchResult[] = [];
    for (let i = 0; i < o.reps; i++) runs.push(runBatchedBench(bin, gguf, { threads: o.threads, prompt: o.prompt, tokens: o.tokens, streams: o.streams }));
    theirs = {
      prefill_tps: median(runs.map((x) => x.prefill_tps)),
      decode_tps: Object.fromEntries(o.streams.map((s) => [String(s), median(runs.map((x) => x.decode_tps[String(s)]))])),
      peak_rss_bytes: Math.max(...runs.map((x) => x.peak_rss_bytes)),
    };
    notes = `llama.cpp flash attention ${runs[0].flash_attn}, KV cache f16`;
  } else {
    const t = runSide<Side & { torch: string; transformers: string }>(
      `PyTorch on ${name} ${base}`,
      python,
      [TORCH_SCRIPT, "--model-dir", dir, "--dtype", base === "f32" ? "float32" : "bfloat16", "--threads", String(o.threads), ...sideArgs],
      { HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" },
    );
    theirs = t;
    notes = `torch ${t.torch}, transformers ${t.transformers}, ${base === "f32" ? "float32" : "bfloat16"} weights`;
  }
  const cols = ["prefill", ...o.streams.map((s) => `decode ${s}`)];
  const row = (x: Side): number[] => [x.prefill_tps, ...o.streams.map((n) => x.decode_tps[String(n)])];
  const a = row(ours);
  const b = row(theirs);
  const theirName = peer === "torch" ? "PyTorch" : "llama.cpp";
  console.log(`\n${name} ${base} (load ${loadAverage()}; ${notes})`);
  console.log(`  ${"".padEnd(10)} ${cols.map((c) => c.padStart(10)).join(" ")}  peak RSS`);
  console.log(`  ${"ours".padEnd(10)} ${a.map((x) => fmt(x, 1).padStart(10)).join(" ")}  ${gib(ours.peak_rss_bytes)}   tokens/s`);
  console.log(`  ${theirName.padEnd(10)} ${b.map((x) => fmt(x, 1).padStart(10)).join(" ")}  ${gib(theirs.peak_rss_bytes)}`);
  const ratios = a.map((x, i) => x / b[i]);
  const memoryRatio = ours.peak_rss_bytes / theirs.peak_rss_bytes;
  console.log(`  ${"ratio".padEnd(10)} ${ratios.map((x) => fmt(x).padStart(10)).join(" ")}  ${fmt(memoryRatio)}×`);
  const scale = o.streams.slice(1).map((n, i) => `${n} streams ${fmt(a[i + 2] / a[1])}× one`);
  if (scale.length > 0) console.log(`  ours: ${scale.join(", ")}`);
  return { ours, theirs, ratios, memoryRatio };
}

const OURS_SCRIPT = fileURLToPath(new URL("./decodeSide.ts", import.meta.url));

let compiled: string | null = null;
/**
 * Our side bundled to one JavaScript file, as the product runs its engine (dist/entry.js), so its
 * peak RSS holds no TypeScript loader: through tsx the same process starts 39 MiB bigger (82 MiB
 * against 43 before any model is loaded), which is the development setup's, not the engine's.
 */
function compiledSide(): string {
  if (compiled !== null) return compiled;
  const root = fileURLToPath(new URL("../..", import.meta.url));
  // Inside the checkout, so that the bundle finds the project root (and the addon) as src/ does.
  const out = join(root, "node_modules", ".cache", "tinker-cookbook-ts-bench", "decodeSide.mjs");
  buildSync({ entryPoints: [OURS_SCRIPT], bundle: true, platform: "node", format: "esm", target: "node20", outfile: out, logLevel: "warning" });
  compiled = out;
  return out;
}
const TORCH_SCRIPT = fileURLToPath(new URL("../torch_decode.py", import.meta.url));

export async function comparePeerDecode(argv: readonly string[]): Promise<void> {
  const opt = (name: string, fallback: string): string => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? String(argv[i + 1]) : fallback;
  };
  const peer = opt("peer", "llama.cpp");
  if (peer !== "llama.cpp" && peer !== "torch") throw new Error(`--peer ${peer}: expected llama.cpp or torch`);
  const shapes = opt("shapes", "smollm2-135m,qwen3-0.6b").split(",");
  const bases = opt("bases", "bf16,f32").split(",");
  for (const b of bases) if (b !== "bf16" && b !== "f32") throw new Error(`--bases ${b}: expected bf16 and/or f32`);
  const o: DecodeOptions = {
    prompt: Number(opt("prompt", "128")),
    tokens: Number(opt("tokens", "128")),
    streams: opt("streams", "1,4,16").split(",").map(Number),
    reps: Number(opt("reps", "3")),
    threads: Number(opt("threads", "2")),
  };

  console.log(`CPU: ${cpuDescription()}; load average ${loadAverage()}`);
  const python = ensurePythonVenv(["torch", "transformers", "safetensors"]);
  console.log(
    `${peer === "llama.cpp" ? `llama.cpp: ${ensureBatchedBench()} (from ${NODE_LLAMA_CPP})` : "PyTorch: transformers' generate() (bench/torch_decode.py)"}; ${o.threads} threads each; prompt ${o.prompt}, ${o.tokens} tokens per stream, shared prompt; medians of ${o.reps}`,
  );
  const summary: string[] = [];
  for (const name of shapes) {
    for (const base of bases as ("bf16" | "f32")[]) {
      const c = compareDecode(python, peer, name, base, o);
      summary.push(`| ${name} | ${base} | ${c.ratios.map((x) => fmt(x)).join(" | ")} | ${fmt(c.memoryRatio)} |`);
    }
  }
  const cols = ["prefill", ...o.streams.map((s) => `decode ${s}`)];
  console.log(`\nratios ours / ${peer === "torch" ? "PyTorch" : "llama.cpp"} (tokens/s; memory: peak RSS), load at the end ${loadAverage()}`);
  console.log(`| model | weights | ${cols.join(" | ")} | peak memory |`);
  console.log(`|---|---|${cols.map(() => "---|").join("")}---|`);
  for (const l of summary) console.log(l);
}
