// bench:families — every decoder family the embedded engine implements, on one real shape each
// (bench/lib/shapes.ts; random weights saved by transformers, nothing downloaded), against PyTorch
// in one run: the LoRA step (r32 on every linear and lm_head, 8 × 128 tokens) against
// transformers + PEFT, and decoding (prefill of one prompt, then 1 and 4 streams) against
// transformers' generate(), both at bf16 weights. Each side runs in its own process. Prints the
// CPU and load, each comparison as it finishes, then one table of ratios (ours / PyTorch: for
// times below 1 is ours faster; for tokens/s above 1 is).
// Usage: npm run bench:families [-- --families llama,gemma3_text --steps 1 --tokens 32 --prompt 64 --streams 1,4 --reps 1 --threads 2]
// The larger shapes need about 14 GB free for PEFT (olmo2-1b); run it alone.
import { ensurePythonVenv } from "../test-e2e/pythonVenv.ts";
import { MODEL_TYPES } from "../src/engine/model/config.ts";
import { compareDecode, type DecodeComparison } from "./lib/decodePeer.ts";
import { cpuDescription, loadAverage } from "./lib/machine.ts";
import { benchShape } from "./lib/shapes.ts";
import { compareLoraStep, type StepComparison } from "./lib/stepCompare.ts";

/** The shape each family is measured on: its smallest released model, or a few layers of it. */
const FAMILY_SHAPES: Record<string, string> = {
  llama: "smollm2-135m",
  qwen3: "qwen3-0.6b",
  gemma3_text: "gemma3-270m",
  smollm3: "smollm3-3b-4l",
  olmo2: "olmo2-1b",
  phi3: "phi3-mini-4l",
  qwen3_moe: "qwen3-30b-a3b-2l",
  qwen3_5_text: "qwen3.5-0.8b",
  gpt_oss: "gpt-oss-20b-2l",
};

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? String(argv[i + 1]) : fallback;
};
const families = opt("families", Object.keys(FAMILY_SHAPES).join(",")).split(",");
for (const f of families) {
  if (FAMILY_SHAPES[f] === undefined) {
    throw new Error(`--families ${f}: expected some of ${Object.keys(FAMILY_SHAPES).join(", ")}`);
  }
}
const missing = MODEL_TYPES.filter((t) => t !== "qwen2" && FAMILY_SHAPES[t] === undefined);
const threads = Number(opt("threads", "2"));
const steps = Number(opt("steps", "1"));
const decode = {
  prompt: Number(opt("prompt", "64")),
  tokens: Number(opt("tokens", "32")),
  streams: opt("streams", "1,4").split(",").map(Number),
  reps: Number(opt("reps", "1")),
  threads,
};
const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : "–");

console.log(`CPU: ${cpuDescription()}; load average ${loadAverage()}; ${threads} threads each side`);
if (missing.length > 0) console.log(`families without a bench shape yet: ${missing.join(", ")}`);
const python = ensurePythonVenv(["torch", "transformers", "peft", "safetensors"]);
const rows: { family: string; shape: string; step: StepComparison; decode: DecodeComparison }[] = [];
for (const family of families) {
  const shape = FAMILY_SHAPES[family];
  if (benchShape(shape).modelType !== family) throw new Error(`shape ${shape} is ${benchShape(shape).modelType}, not ${family}`);
  console.log(`\n== ${family}`);
  const step = compareLoraStep(python, shape, { steps, threads, base: "bf16", rank: 32, seqs: 8, len: 128, peft: true });
  rows.push({ family, shape, step, decode: compareDecode(python, "torch", shape, "bf16", decode) });
}

const cols = ["prefill", ...decode.streams.map((s) => `decode ${s}`)];
console.log(`\nours / PyTorch 2.13, bf16 weights, load at the end ${loadAverage()}`);
console.log(`| family | shape | LoRA step wall | LoRA step CPU | step peak memory | ${cols.map((c) => `${c} tokens/s`).join(" | ")} | decode peak memory |`);
console.log(`|---|---|---|---|---|${cols.map(() => "---|").join("")}---|`);
for (const r of rows) {
  const ours = r.step.ours;
  const peft = r.step.peft;
  const ratio = (a: number, b: number | undefined): string => (b === undefined ? "–" : fmt(a / b));
  console.log(
    `| ${r.family} | ${r.shape} | ${ratio(ours.step_s, peft?.step_s)} (${fmt(ours.step_s, 1)} s vs ${fmt(peft?.step_s ?? Number.NaN, 1)} s) | ${ratio(ours.cpu_s, peft?.cpu_s)} | ${ratio(ours.peak_rss_bytes, peft?.peak_rss_bytes)} | ${r.decode.ratios.map((x) => fmt(x)).join(" | ")} | ${fmt(r.decode.memoryRatio)} |`,
  );
}
