// One LoRA training step of a real-shape random model, ours against transformers + PEFT on
// PyTorch, each side in its own process (so each peak RSS is its own), printed as bench:engine_real
// prints it and returned for tables (bench:families).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { OursResult } from "./oursStep.ts";
import { benchBatch, gib, lastJson, randomModelDir, runPeftPeer, writeBatchFile, type PeftResult } from "./peers.ts";
import { benchShape, loraStepFlops } from "./shapes.ts";

export interface StepComparison {
  ours: OursResult;
  peft?: PeftResult;
}

const fmt = (x: number, d = 2): string => x.toFixed(d);
const oursScript = fileURLToPath(new URL("./oursStep.ts", import.meta.url));

export function compareLoraStep(
  python: string,
  name: string,
  opts: { steps: number; threads: number; base: "bf16" | "fp32"; rank: number; seqs: number; len: number; peft: boolean },
): StepComparison {
  const config = benchShape(name);
  const t0 = performance.now();
  const dir = randomModelDir(python, name);
  console.log(`${name}: ${dir}${performance.now() - t0 > 1000 ? ` (written by transformers in ${fmt((performance.now() - t0) / 1000, 1)} s)` : ""}`);
  const batchFile = writeBatchFile(name, benchBatch(config.vocabSize, opts.seqs, opts.len));
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", oursScript, "--model-dir", dir, "--batch", batchFile, "--steps", String(opts.steps), "--rank", String(opts.rank)],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, COOKBOOK_THREADS: String(opts.threads), COOKBOOK_BASE_WEIGHTS: opts.base === "fp32" ? "fp32" : "auto" },
    },
  );
  const ours = lastJson<OursResult>("our step", r);
  const flops = loraStepFlops(config, opts.seqs * opts.len, opts.len, opts.rank);
  const total = flops.dense + flops.lora + flops.attention;
  const rate = ours.gemm_gflops * 1e9;
  console.log(
    `  ours (${opts.threads} threads, ${ours.base === "resident" ? "bf16 base resident" : "float32 base"}): step ${fmt(ours.step_s)} s wall, ${fmt(ours.cpu_s)} s cpu; peak ${gib(ours.peak_rss_bytes)} (${gib(ours.rss_after_load_bytes)} after loading in ${fmt(ours.load_s, 1)} s); step-0 loss ${ours.losses[0].toFixed(3)}`,
  );
  // The FLOP count knows attention and MLP layers; Gated DeltaNet layers are not in it.
  if (config.modelType !== "qwen3_5_text")
    console.log(
      `  GEMM-bound limit: ${fmt(total / 1e9, 0)} GFLOP (dense ${fmt(flops.dense / 1e9, 0)}, LoRA ${fmt(flops.lora / 1e9, 0)}, attention ${fmt(flops.attention / 1e9, 0)}) at ${fmt(rate / 1e9, 0)} GFLOP/s = ${fmt(total / rate)} s (dense only ${fmt(flops.dense / rate)} s); ours is ${fmt(ours.step_s / (total / rate))}× it`,
    );
  if (!opts.peft) return { ours };
  const peer = runPeftPeer(python, dir, batchFile, { steps: opts.steps, rank: opts.rank, threads: opts.threads });
  const lossDiff = Math.abs(peer.losses[0] - ours.losses[0]) / Math.abs(peer.losses[0]);
  console.log(
    `  transformers ${peer.transformers} + PEFT ${peer.peft}, torch ${peer.torch} (${peer.threads} threads): step ${fmt(peer.step_s)} s wall, ${fmt(peer.cpu_s)} s cpu; peak ${gib(peer.peak_rss_bytes)} (${gib(peer.rss_after_load_bytes)} after loading); step-0 loss ${peer.losses[0].toFixed(3)} (relative difference ${peer.losses[0] === ours.losses[0] ? 0 : lossDiff.toExponential(1)})`,
  );
  console.log(
    `  ratio ours/PEFT: ${fmt(ours.step_s / peer.step_s)} wall, ${fmt(ours.cpu_s / peer.cpu_s)} cpu; peak memory ${fmt(ours.peak_rss_bytes / peer.peak_rss_bytes)}×`,
  );
  return { ours, peft: peer };
}
