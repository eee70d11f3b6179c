// The toy model of example_line_fit: data, loss/gradient, and its checkpoint files.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendCheckpoint, checkpointName, getLastCheckpoint } from "../../src/runs/checkpoints.ts";

export interface LineState {
  a: number;
  b: number;
}
export interface LineData {
  xs: number[];
  ys: number[];
}

/** Small deterministic PRNG (mulberry32) so a seed reproduces the same points. */
function mulberry32(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeData(opts: { true_a: number; true_b: number; num_points: number; noise: number; seed: number }): LineData {
  const rand = mulberry32(opts.seed);
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < opts.num_points; i++) {
    const x = rand() * 2 - 1;
    // Box-Muller; 1 - rand() avoids log(0).
    const gauss = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    xs.push(x);
    ys.push(opts.true_a * x + opts.true_b + opts.noise * gauss);
  }
  return { xs, ys };
}

export function meanSquaredError(state: LineState, data: LineData): { loss: number; gradA: number; gradB: number } {
  let loss = 0;
  let gradA = 0;
  let gradB = 0;
  const n = data.xs.length;
  for (let i = 0; i < n; i++) {
    const err = state.a * data.xs[i] + state.b - data.ys[i];
    loss += err * err;
    gradA += 2 * err * data.xs[i];
    gradB += 2 * err;
  }
  return { loss: loss / n, gradA: gradA / n, gradB: gradB / n };
}

/** Writes the state to checkpoints/<name>.json and records it in checkpoints.jsonl. */
export function saveCheckpoint(logDir: string, state: LineState, step: number, final: boolean): void {
  const name = final ? "final" : checkpointName(step);
  const dir = join(logDir, "checkpoints");
  mkdirSync(dir, { recursive: true });
  const statePath = join(dir, `${name}.json`);
  writeFileSync(statePath, `${JSON.stringify({ ...state, step })}\n`);
  appendCheckpoint(logDir, { name, batch: step, ...(final ? { final: true } : {}), state_path: statePath, sampler_path: statePath });
}

/** The state and next step from the last resumable checkpoint, if any. */
export function loadState(logDir: string): { state: LineState; step: number } | undefined {
  const record = getLastCheckpoint(logDir);
  if (!record || typeof record.state_path !== "string") return undefined;
  const saved = JSON.parse(readFileSync(record.state_path, "utf8")) as LineState & { step: number };
  return { state: { a: saved.a, b: saved.b }, step: typeof record.batch === "number" ? record.batch : saved.step };
}
