// What the engine benchmarks share: the token batch both sides train on, the Hugging Face
// transformers + PEFT peer (bench/peft_lora_step.py) in the project venv, random-weight models of
// real architectures saved by transformers (bench/make_random_model.py), and peak memory.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { modelConfigToHfJson } from "../../src/engine/storage/loadModel.ts";
import type { ModelConfig } from "../../src/engine/model/config.ts";
import { benchShapeHfJson } from "./shapes.ts";

export interface BenchBatch {
  tokens: number[][];
  targets: number[][];
}

/** Deterministic random tokens and targets (an LCG), the same on every run and for every side. */
export function benchBatch(vocab: number, seqs: number, len: number, seed = 12345): BenchBatch {
  let state = seed;
  const rand = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
  const row = (): number[] => Array.from({ length: len }, () => Math.floor(rand() * vocab));
  const tokens: number[][] = [];
  const targets: number[][] = [];
  for (let s = 0; s < seqs; s++) {
    tokens.push(row());
    targets.push(row());
  }
  return { tokens, targets };
}

/** VmHWM (peak resident set) of this process, in bytes. */
export function peakRssBytes(): number {
  return statusBytes("VmHWM");
}

export function rssBytes(): number {
  return statusBytes("VmRSS");
}

function statusBytes(field: string): number {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return line === undefined ? 0 : Number(line.split(/\s+/)[1]) * 1024;
}

export const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

export interface StepResult {
  step_s: number;
  steps_s: number[];
  cpu_s: number;
  losses: number[];
  peak_rss_bytes: number;
  rss_after_load_bytes: number;
}

export interface PeftResult extends StepResult {
  torch: string;
  transformers: string;
  peft: string;
  threads: number;
}

const here = (file: string): string => fileURLToPath(new URL(`../${file}`, import.meta.url));

/** Parses the JSON a benchmark child prints last, or throws with its output. */
export function lastJson<T>(what: string, r: { status: number | null; stdout: string; stderr: string }): T {
  const line = r.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new Error(`${what} failed (exit ${r.status}): ${(r.stderr || r.stdout).slice(-1500)}`);
  }
}

/** One PEFT LoRA run in its own process (so its peak memory is its own). */
export function runPeftPeer(python: string, modelDir: string, batchFile: string, opts: { steps: number; rank: number; threads: number }): PeftResult {
  const r = spawnSync(
    python,
    [
      here("peft_lora_step.py"),
      "--model-dir",
      modelDir,
      "--batch",
      batchFile,
      "--steps",
      String(opts.steps),
      "--rank",
      String(opts.rank),
      "--threads",
      String(opts.threads),
    ],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" } },
  );
  return lastJson<PeftResult>("transformers + PEFT peer", r);
}

/** A folder with config.json only: the PEFT peer builds the model from it with random init. */
export function configOnlyDir(name: string, config: ModelConfig): string {
  const dir = join(tmpdir(), `cookbook-bench-config-${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify(modelConfigToHfJson(config), null, 2));
  return dir;
}

export function writeBatchFile(name: string, batch: BenchBatch, dir = tmpdir()): string {
  const file = join(dir, `cookbook-bench-batch-${name}.json`);
  writeFileSync(file, JSON.stringify(batch));
  return file;
}

/**
 * A random-weight model of the bench shape `name` saved by transformers (bf16 safetensors, as
 * real checkpoints are), made once and kept in `root` (default $TMPDIR/cookbook-bench-models).
 */
export function randomModelDir(
  python: string,
  name: string,
  hfJson: Record<string, unknown> = benchShapeHfJson(name),
  root = join(tmpdir(), "cookbook-bench-models"),
): string {
  const dir = join(root, name);
  if (existsSync(join(dir, "config.json")) && readdirSync(dir).some((f) => f.endsWith(".safetensors"))) return dir;
  mkdirSync(root, { recursive: true });
  const cfgFile = join(root, `${name}.config.json`);
  writeFileSync(cfgFile, JSON.stringify(hfJson));
  const r = spawnSync(python, [here("make_random_model.py"), "--config", cfgFile, "--out", dir], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" },
  });
  lastJson<{ out: string }>(`make_random_model.py for ${name}`, r);
  return dir;
}
