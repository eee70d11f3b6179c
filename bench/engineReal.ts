// The LoRA training step at real model sizes, ours vs Hugging Face transformers + PEFT on PyTorch
// 2.13 (bench/peft_lora_step.py in the project venv): Qwen3-0.6B and Llama-3.2-1B with random
// weights in the real architectures, saved by transformers (bf16 safetensors, made once under
// $TMPDIR/cookbook-bench-models; nothing is downloaded). Both sides load that folder (PEFT in
// float32; ours as the engine does, bf16 matrices kept 16-bit, or float32 with --base fp32) and train LoRA r32 on q,k,v,o,gate,up,down and lm_head over the same 8 × 128 tokens, each in its
// own process; printed: step time (wall, CPU), peak memory (VmHWM, model included), the step-0
// loss of both (the same weights and B = 0, so they must agree), and the GEMM-bound limit.
// Needs ~8 GB (Qwen3-0.6B) and ~14 GB (Llama-3.2-1B) free; run it alone:
//   flock /tmp/heavy.lock npm run bench:engine_real [-- --shape qwen3-0.6b|llama-3.2-1b|qwen3-30b-a3b-2l --steps 2 --no-peft --threads 2 --base bf16|fp32]
// --threads n: our pool and torch alike (see bench/engine.ts).
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { ensurePythonVenv } from "../test-e2e/pythonVenv.ts";
import type { OursResult } from "./lib/oursStep.ts";
import { benchBatch, gib, lastJson, randomModelDir, runPeftPeer, writeBatchFile } from "./lib/peers.ts";
import { benchShape, loraStepFlops } from "./lib/shapes.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? String(argv[i + 1]) : fallback;
};
const steps = Number(opt("steps", "2"));
const rank = 32;
const seqs = 8;
const len = 128;
const shapes = opt("shape", "qwen3-0.6b,llama-3.2-1b").split(",");
const threads = Number(opt("threads", "2"));
const base = opt("base", "bf16");
if (base !== "bf16" && base !== "fp32") throw new Error(`--base ${base}: expected bf16 (the engine's default for a bf16 checkpoint) or fp32`);
const fmt = (x: number, d = 2): string => x.toFixed(d);

const python = ensurePythonVenv(["torch", "transformers", "peft", "safetensors"]);
const oursScript = fileURLToPath(new URL("./lib/oursStep.ts", import.meta.url));
console.log(
  `LoRA r${rank} step on ${seqs}×${len} tokens, real architectures with random weights; load ${loadavg()
    .map((x) => fmt(x, 1))
    .join(" ")}`,
);
for (const name of shapes) {
  const config = benchShape(name);
  const t0 = performance.now();
  const dir = randomModelDir(python, name, config);
  console.log(`${name}: ${dir}${performance.now() - t0 > 1000 ? ` (written by transformers in ${fmt((performance.now() - t0) / 1000, 1)} s)` : ""}`);
  const batchFile = writeBatchFile(name, benchBatch(config.vocabSize, seqs, len));

  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", oursScript, "--model-dir", dir, "--batch", batchFile, "--steps", String(steps), "--rank", String(rank)],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, COOKBOOK_THREADS: String(threads), COOKBOOK_BASE_WEIGHTS: base === "fp32" ? "fp32" : "auto" },
    },
  );
  const ours = lastJson<OursResult>("our step", r);
  const flops = loraStepFlops(config, seqs * len, len, rank);
  const total = flops.dense + flops.lora + flops.attention;
  const rate = ours.gemm_gflops * 1e9;
  console.log(
    `  ours (${threads} threads, ${ours.base === "resident" ? "bf16 base resident" : "float32 base"}): step ${fmt(ours.step_s)} s wall, ${fmt(ours.cpu_s)} s cpu; peak ${gib(ours.peak_rss_bytes)} (${gib(ours.rss_after_load_bytes)} after loading in ${fmt(ours.load_s, 1)} s); step-0 loss ${ours.losses[0].toFixed(3)}`,
  );
  console.log(
    `  GEMM-bound limit: ${fmt(total / 1e9, 0)} GFLOP (dense ${fmt(flops.dense / 1e9, 0)}, LoRA ${fmt(flops.lora / 1e9, 0)}, attention ${fmt(flops.attention / 1e9, 0)}) at ${fmt(rate / 1e9, 0)} GFLOP/s = ${fmt(total / rate)} s (dense only ${fmt(flops.dense / rate)} s); ours is ${fmt(ours.step_s / (total / rate))}× it`,
  );
  if (argv.includes("--no-peft")) continue;
  const peer = runPeftPeer(python, dir, batchFile, { steps, rank, threads });
  const lossDiff = Math.abs(peer.losses[0] - ours.losses[0]) / Math.abs(peer.losses[0]);
  console.log(
    `  transformers ${peer.transformers} + PEFT ${peer.peft}, torch ${peer.torch} (${peer.threads} threads): step ${fmt(peer.step_s)} s wall, ${fmt(peer.cpu_s)} s cpu; peak ${gib(peer.peak_rss_bytes)} (${gib(peer.rss_after_load_bytes)} after loading); step-0 loss ${peer.losses[0].toFixed(3)} (relative difference ${peer.losses[0] === ours.losses[0] ? 0 : lossDiff.toExponential(1)})`,
  );
  console.log(
    `  ratio ours/PEFT: ${fmt(ours.step_s / peer.step_s)} wall, ${fmt(ours.cpu_s / peer.cpu_s)} cpu (issue 19 goal ≤ 0.45 on Qwen3-0.6B); peak memory ${fmt(ours.peak_rss_bytes / peer.peak_rss_bytes)}× (goal ≤ 1)`,
  );
}
console.log(
  `load at the end ${loadavg()
    .map((x) => fmt(x, 1))
    .join(" ")}`,
);
