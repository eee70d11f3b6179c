// llama.cpp as the sampling peer of `npm run bench:decode -- --peer llama.cpp`. Nothing of
// llama.cpp enters the repository: its source comes from the `node-llama-cpp` npm package (which
// ships it as a git bundle), fetched with `npm pack` into a cache folder outside the checkout,
// where `llama-batched-bench` is built once with cmake (-DGGML_NATIVE=ON, for this CPU). The
// benchmark models are converted with llama.cpp's own convert_hf_to_gguf.py in the project venv.
// Cache: $COOKBOOK_LLAMA_CPP_DIR or ~/.cache/tinker-cookbook-ts/llama.cpp.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync, unlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package (and so the llama.cpp commit) the comparison is pinned to. */
export const NODE_LLAMA_CPP = "node-llama-cpp@3.22.1";

export function llamaCppDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.COOKBOOK_LLAMA_CPP_DIR || join(homedir(), ".cache", "tinker-cookbook-ts", "llama.cpp");
}

function run(what: string, cmd: string, args: string[], opts: { cwd?: string; quiet?: boolean; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: opts.quiet === false ? ["ignore", "inherit", "inherit"] : "pipe",
  });
  if (r.error !== undefined || r.status !== 0) {
    throw new Error(`${what} failed (${cmd} ${args.join(" ")}, exit ${r.status}): ${r.error?.message ?? ""}${(r.stderr ?? "").slice(-2000)}`);
  }
  return r;
}

/** The llama.cpp source tree (a clone of the bundle inside the npm package), fetched once. */
export function ensureLlamaCppSource(root = llamaCppDir()): string {
  const src = join(root, "src");
  if (existsSync(join(src, "CMakeLists.txt"))) return src;
  mkdirSync(root, { recursive: true });
  let tgz = readdirSync(root).find((f) => f.startsWith("node-llama-cpp-") && f.endsWith(".tgz"));
  if (tgz === undefined) {
    console.log(`fetching ${NODE_LLAMA_CPP} (npm pack) into ${root}`);
    run("npm pack", "npm", ["pack", NODE_LLAMA_CPP, "--silent"], { cwd: root });
    tgz = readdirSync(root).find((f) => f.startsWith("node-llama-cpp-") && f.endsWith(".tgz"));
    if (tgz === undefined) throw new Error(`npm pack ${NODE_LLAMA_CPP} left no tarball in ${root}`);
  }
  const bundle = "package/llama/gitRelease.bundle";
  run("extracting the llama.cpp bundle", "tar", ["xzf", tgz, bundle], { cwd: root });
  run("cloning the llama.cpp bundle", "git", ["clone", "--quiet", join(root, bundle), src]);
  return src;
}

/** `llama-batched-bench`, built once (a few minutes on 2 cores). */
export function ensureBatchedBench(root = llamaCppDir()): string {
  const src = ensureLlamaCppSource(root);
  const bin = join(src, "build", "bin", "llama-batched-bench");
  if (existsSync(bin)) return bin;
  console.log(`building llama-batched-bench in ${src}/build (cmake, -DGGML_NATIVE=ON; once)`);
  const flags = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=OFF",
  ];
  run("cmake configure", "cmake", ["-S", src, "-B", join(src, "build"), ...flags], { quiet: false });
  run("cmake build", "cmake", ["--build", join(src, "build"), "--target", "llama-batched-bench", "-j"], { quiet: false });
  if (!existsSync(bin)) throw new Error(`the build finished but ${bin} is missing`);
  return bin;
}

const here = (file: string): string => fileURLToPath(new URL(`../${file}`, import.meta.url));

/**
 * The GGUF of a Hugging Face model folder at `outtype` (bf16 or f32), converted once by llama.cpp's
 * convert_hf_to_gguf.py. The folders the benchmarks write have no tokenizer; a small SentencePiece
 * model (bench/make_spm_tokenizer.py) stands in, padded by the converter to the config's vocabulary.
 */
export function ensureGguf(python: string, modelDir: string, name: string, outtype: "bf16" | "f32", root = llamaCppDir()): string {
  const models = join(root, "models");
  const out = join(models, `${name}-${outtype}.gguf`);
  if (existsSync(out)) return out;
  const src = ensureLlamaCppSource(root);
  if (spawnSync(python, ["-c", "import sentencepiece"], { stdio: "ignore" }).status !== 0) {
    run("pip install sentencepiece (for the stand-in tokenizer)", python, ["-m", "pip", "install", "--quiet", "--retries", "0", "sentencepiece"]);
  }
  const conv = join(models, `${name}-hf`);
  mkdirSync(conv, { recursive: true });
  for (const f of readdirSync(modelDir).filter((f) => f === "config.json" || f.endsWith(".safetensors") || f.endsWith(".safetensors.index.json"))) {
    const link = join(conv, f);
    if (existsSync(link)) unlinkSync(link);
    symlinkSync(join(modelDir, f), link);
  }
  run("making the stand-in tokenizer", python, [here("make_spm_tokenizer.py"), join(conv, "tokenizer.model")]);
  console.log(`converting ${name} to ${outtype} GGUF with convert_hf_to_gguf.py`);
  run("convert_hf_to_gguf.py", python, [join(src, "convert_hf_to_gguf.py"), conv, "--outtype", outtype, "--outfile", `${out}.tmp`]);
  run("rename", "mv", [`${out}.tmp`, out]);
  return out;
}

export interface BatchedBenchResult {
  /** Prompt tokens per second of one prompt (the 1-stream row). */
  prefill_tps: number;
  /** Generated tokens per second over all streams, by stream count. */
  decode_tps: Record<string, number>;
  peak_rss_bytes: number;
  flash_attn: number;
}

/**
 * One llama-batched-bench process: a shared prompt (-pps, as our samples of one request share
 * theirs) of `prompt` tokens, `tokens` generated per stream, for each stream count; peak RSS from
 * GNU time. The KV cache is llama.cpp's default (f16).
 */
export function runBatchedBench(bin: string, gguf: string, o: { threads: number; prompt: number; tokens: number; streams: number[] }): BatchedBenchResult {
  const ctx = o.prompt + Math.max(...o.streams) * o.tokens + 64;
  const args = ["-f", "peak_kb=%M", bin, "-m", gguf, "-c", String(ctx), "-b", "2048", "-ub", "512"];
  args.push("-npp", String(o.prompt), "-ntg", String(o.tokens), "-npl", o.streams.join(","), "-pps", "-t", String(o.threads), "-tb", String(o.threads));
  args.push("--output-format", "jsonl");
  const r = run("llama-batched-bench", "/usr/bin/time", args);
  const rows = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { pl: number; speed_pp: number; speed_tg: number; flash_attn: number });
  const peak = /peak_kb=(\d+)/.exec(r.stderr);
  if (rows.length === 0 || peak === null) throw new Error(`llama-batched-bench printed no results: ${r.stdout.slice(-1000)}${r.stderr.slice(-1000)}`);
  const decode: Record<string, number> = {};
  for (const row of rows) decode[String(row.pl)] = row.speed_tg;
  const one = rows.find((row) => row.pl === 1) ?? rows[0];
  return { prefill_tps: one.speed_pp, decode_tps: decode, peak_rss_bytes: Number(peak[1]) * 1024, flash_attn: one.flash_attn };
}
