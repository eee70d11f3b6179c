// Per-CPU choice of the GEMM path and the packed kernel's block sizes (docs/kernels.md#per-cpu-gemm-choice).
// The build's static defaults were tuned on Zen 5; on other CPUs OpenBLAS or other blocks can be
// much faster (an Intel Xeon with AVX-512: OpenBLAS ~96 GFLOP per CPU-second, our packed kernel 68-77).
// At the first large product of a process, the candidates are timed on a few training-shaped
// products (one thread, CPU time, min of interleaved rounds, ≤ ~1 s) and the fastest is kept,
// and cached per CPU model + SIMD width + addon build so later processes only read a file.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";
import { writeJsonAtomic } from "../../files/durable.ts";
import { cookbookHome } from "../resolve.ts";

export type GemmBackendName = "openblas" | "packed";

/** The packed kernel's block sizes (gemm.cc); defaults are the build's. */
export interface GemmBlocks {
  readonly kc: number;
  readonly nc: number;
  readonly mr: number;
  readonly nr: number;
  readonly defaultKc: number;
  readonly defaultNc: number;
  /** op(A) not transposed is packed too, instead of read in place by the micro-kernel. */
  readonly packA: boolean;
}

/** What the tuner needs from the addon. */
export interface GemmTunable {
  readonly gemmBackends: readonly GemmBackendName[];
  readonly gemmBackend: GemmBackendName;
  setGemmBackend(name: GemmBackendName): void;
  readonly gemmBlocks: GemmBlocks;
  setGemmBlocks(kc: number, nc: number, packA?: boolean): void;
  readonly numThreads: number;
  setNumThreads(n: number): void;
  gemm(tA: boolean, tB: boolean, M: number, N: number, K: number, alpha: number, A: Float32Array, B: Float32Array, beta: number, C: Float32Array): void;
}

export interface GemmChoice {
  backend: GemmBackendName;
  kc: number;
  nc: number;
  packA: boolean;
}

/** Products at least this big (M·N·K) trigger the tuning: smaller ones finish before it would pay off. */
export const TUNE_MIN_VOLUME = 1 << 26;

const choiceSchema = z.object({
  key: z.string(),
  backend: z.enum(["openblas", "packed"]),
  kc: z.number().int(),
  nc: z.number().int(),
  packA: z.boolean().optional(),
  measuredAt: z.string().optional(),
  gflopPerCpuSecond: z.record(z.string(), z.number()).optional(),
});

/** Positive integer from the environment, or null when unset; a clear error for anything else. */
function envInt(env: NodeJS.ProcessEnv, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  const v = Number(raw);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name}=${raw}: expected a positive integer`);
  return v;
}

type Blocks = Pick<GemmChoice, "kc" | "nc" | "packA">;

/** COOKBOOK_GEMM_KC / COOKBOOK_GEMM_NC / COOKBOOK_GEMM_PACK_A (0 or 1), each falling back to the current value when unset. */
export function explicitBlocks(env: NodeJS.ProcessEnv, current: GemmBlocks): Blocks | null {
  const kc = envInt(env, "COOKBOOK_GEMM_KC");
  const nc = envInt(env, "COOKBOOK_GEMM_NC");
  const rawPack = env.COOKBOOK_GEMM_PACK_A;
  if (rawPack !== undefined && rawPack !== "" && rawPack !== "0" && rawPack !== "1") throw new Error(`COOKBOOK_GEMM_PACK_A=${rawPack}: expected 0 or 1`);
  const packA = rawPack === "1" ? true : rawPack === "0" ? false : null;
  if (kc === null && nc === null && packA === null) return null;
  return { kc: kc ?? current.kc, nc: nc ?? current.nc, packA: packA ?? current.packA };
}

/**
 * The block sizes tried for the packed kernel: the build's defaults first (the Zen 5 values), then
 * a deeper K slice and a wider stripe. Each must pass the kernel tests (test/engine/kernels/gemmBlocks.test.ts).
 */
export function candidateBlocks(b: Pick<GemmBlocks, "nr" | "defaultKc" | "defaultNc">): Blocks[] {
  const out = [
    { kc: b.defaultKc, nc: b.defaultNc, packA: false },
    { kc: 384, nc: 2 * b.defaultNc, packA: false },
    { kc: b.defaultKc, nc: b.defaultNc, packA: true },
    { kc: 384, nc: 2 * b.defaultNc, packA: true },
  ];
  return out.filter((c, i) => c.nc % b.nr === 0 && out.findIndex((d) => d.kc === c.kc && d.nc === c.nc && d.packA === c.packA) === i);
}

/** Cache identity: CPU model, SIMD width (the micro-kernel's nr) and the addon build's stamp. */
export function tuneKey(blocks: GemmBlocks, backends: readonly GemmBackendName[], buildId: string): string {
  const model = cpus()[0]?.model ?? "unknown";
  return `${model} | nr ${blocks.nr} | ${backends.join(",")} | ${buildId}`;
}

export function tuneFile(key: string, env: NodeJS.ProcessEnv = process.env): string {
  const hash = createHash("sha256").update(key).digest("hex").slice(0, 16);
  return join(cookbookHome(env), "cache", "kernels", `gemm-${hash}.json`);
}

/** The cached choice for `key`, or null when absent, unreadable or for another key (a hash collision). */
export function readCachedChoice(file: string, key: string): GemmChoice | null {
  if (!existsSync(file)) return null;
  try {
    const parsed = choiceSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success || parsed.data.key !== key) return null;
    return { backend: parsed.data.backend, kc: parsed.data.kc, nc: parsed.data.nc, packA: parsed.data.packA ?? false };
  } catch {
    return null;
  }
}

interface Probe {
  tA: boolean;
  tB: boolean;
  M: number;
  N: number;
  K: number;
}

// The training step's three product kinds (x·Wᵀ, dY·W, Xᵀ·Y), each ~0.4-0.8 GFLOP: big enough that
// blocking matters, small enough that 4 candidates × 3 rounds stay under ~1 s of one core.
const PROBES: Probe[] = [
  { tA: false, tB: true, M: 384, N: 1024, K: 1024 },
  { tA: false, tB: false, M: 384, N: 1024, K: 1024 },
  { tA: true, tB: false, M: 384, N: 512, K: 1024 },
];

const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

export interface Measured {
  choice: GemmChoice;
  /** GFLOP per CPU-second over all probes, per candidate ("packed 192/256", "openblas"). */
  rates: Record<string, number>;
}

export const candidateName = (c: GemmChoice): string => (c.backend === "openblas" ? "openblas" : `packed ${c.kc}/${c.nc}${c.packA ? " pack-A" : ""}`);

/**
 * Times every candidate on PROBES with one thread: rounds interleave the candidates so that a burst
 * of load hits all of them, and each product keeps its fastest CPU time (load only ever adds time).
 * Leaves the kernels on the winner and the thread count as it was.
 */
export function measureChoice(k: GemmTunable, candidates: GemmChoice[], rounds = 3): Measured {
  const threads = k.numThreads;
  const fill = (n: number): Float32Array => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = ((i * 7919) % 1000) / 1000 - 0.5;
    return a;
  };
  const maxA = Math.max(...PROBES.map((p) => p.M * p.K));
  const maxB = Math.max(...PROBES.map((p) => p.K * p.N));
  const maxC = Math.max(...PROBES.map((p) => p.M * p.N));
  const A = fill(maxA);
  const B = fill(maxB);
  const C = new Float32Array(maxC);
  const best = candidates.map(() => PROBES.map(() => Number.POSITIVE_INFINITY));
  const apply = (c: GemmChoice): void => {
    k.setGemmBackend(c.backend);
    // The openblas candidate carries the default (or explicit) blocks: attention's products use them.
    k.setGemmBlocks(c.kc, c.nc, c.packA);
  };
  k.setNumThreads(1);
  try {
    for (let r = 0; r < rounds; r++) {
      candidates.forEach((c, ci) => {
        apply(c);
        PROBES.forEach((p, pi) => {
          // The first round's first call also warms the candidate's scratch buffers.
          if (r === 0) k.gemm(p.tA, p.tB, p.M, p.N, p.K, 1, A, B, 0, C);
          const t0 = cpuSeconds();
          k.gemm(p.tA, p.tB, p.M, p.N, p.K, 1, A, B, 0, C);
          best[ci][pi] = Math.min(best[ci][pi], cpuSeconds() - t0);
        });
      });
    }
  } finally {
    k.setNumThreads(threads);
  }
  const flops = PROBES.reduce((s, p) => s + 2 * p.M * p.N * p.K, 0);
  const rates: Record<string, number> = {};
  let win = 0;
  let winTime = Number.POSITIVE_INFINITY;
  candidates.forEach((c, ci) => {
    const t = best[ci].reduce((s, x) => s + x, 0);
    rates[candidateName(c)] = Math.round(flops / Math.max(t, 1e-9) / 1e8) / 10;
    if (t < winTime) {
      winTime = t;
      win = ci;
    }
  });
  apply(candidates[win]);
  return { choice: candidates[win], rates };
}

/** The addon build's identity: the install's stamp of its inputs (scripts/installNative.mjs), else the file's size and time. */
export function addonBuildId(addonPath: string, statFallback: () => string): string {
  const stamp = join(dirname(dirname(addonPath)), "cookbook_kernels.stamp");
  try {
    const parsed = z.object({ inputs: z.string() }).safeParse(JSON.parse(readFileSync(stamp, "utf8")));
    if (parsed.success) return parsed.data.inputs;
  } catch {
    // no stamp (built some other way): fall through
  }
  return statFallback();
}

export interface TuneOptions {
  env?: NodeJS.ProcessEnv;
  buildId: string;
}

/**
 * Picks the GEMM path and blocks for this process: COOKBOOK_KERNEL_TUNE=0 keeps the static defaults;
 * COOKBOOK_GEMM fixes the path and COOKBOOK_GEMM_KC/NC the blocks (the addon applied them at load),
 * so only what they leave open is chosen; a cached choice for this CPU and build is reused;
 * otherwise the candidates are measured and the result written atomically for later processes.
 * Returns what was applied and where it came from.
 */
export function tuneGemm(k: GemmTunable, opts: TuneOptions): { choice: GemmChoice; source: "defaults" | "cache" | "measured" | "fixed" } {
  const env = opts.env ?? process.env;
  const current = (): GemmChoice => ({ backend: k.gemmBackend, kc: k.gemmBlocks.kc, nc: k.gemmBlocks.nc, packA: k.gemmBlocks.packA });
  if (env.COOKBOOK_KERNEL_TUNE === "0") return { choice: current(), source: "defaults" };
  const forced = env.COOKBOOK_GEMM === "packed" || env.COOKBOOK_GEMM === "openblas" ? env.COOKBOOK_GEMM : null;
  const blocksFixed = explicitBlocks(env, k.gemmBlocks) !== null;
  const candidates: GemmChoice[] = [];
  const now = { kc: k.gemmBlocks.kc, nc: k.gemmBlocks.nc, packA: k.gemmBlocks.packA };
  if (forced !== "packed" && k.gemmBackends.includes("openblas")) candidates.push({ backend: "openblas", ...now });
  if (forced !== "openblas") {
    const blocks = blocksFixed ? [now] : candidateBlocks(k.gemmBlocks);
    for (const b of blocks) candidates.push({ backend: "packed", ...b });
  }
  if (candidates.length <= 1) return { choice: current(), source: "fixed" };
  const key = `${tuneKey(k.gemmBlocks, k.gemmBackends, opts.buildId)} | ${candidates.map(candidateName).join(",")}`;
  const file = tuneFile(key, env);
  const cached = readCachedChoice(file, key);
  if (cached !== null && candidates.some((c) => candidateName(c) === candidateName(cached))) {
    k.setGemmBackend(cached.backend);
    k.setGemmBlocks(cached.kc, cached.nc, cached.packA);
    return { choice: cached, source: "cache" };
  }
  const measured = measureChoice(k, candidates);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeJsonAtomic(file, { key, ...measured.choice, measuredAt: new Date().toISOString(), gflopPerCpuSecond: measured.rates });
  } catch (err) {
    // A read-only home only costs the next process another measurement.
    process.stderr.write(`cookbook: could not cache the GEMM choice in ${file}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  return { choice: measured.choice, source: "measured" };
}
