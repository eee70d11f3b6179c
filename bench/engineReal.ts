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
import { loadavg } from "node:os";
import { ensurePythonVenv } from "../test-e2e/pythonVenv.ts";
import { compareLoraStep } from "./lib/stepCompare.ts";

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
const base = opt("base", "bf16") as "bf16" | "fp32";
if (base !== "bf16" && base !== "fp32") throw new Error(`--base ${base}: expected bf16 (the engine's default for a bf16 checkpoint) or fp32`);
const fmt = (x: number, d = 2): string => x.toFixed(d);

const python = ensurePythonVenv(["torch", "transformers", "peft", "safetensors"]);
console.log(
  `LoRA r${rank} step on ${seqs}×${len} tokens, real architectures with random weights; load ${loadavg()
    .map((x) => fmt(x, 1))
    .join(" ")}`,
);
for (const name of shapes) compareLoraStep(python, name, { steps, threads, base, rank, seqs, len, peft: !argv.includes("--no-peft") });
console.log(
  `load at the end ${loadavg()
    .map((x) => fmt(x, 1))
    .join(" ")}`,
);
