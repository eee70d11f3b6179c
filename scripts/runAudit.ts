// What survived in a run directory after faults: read strictly (every line whole JSON, the file
// ending in a newline), metrics steps unique and increasing, every listed checkpoint loadable from
// the store, the final record present, and no temporary files left behind. Shared by the soak
// script (npm run soak) and the fault-injection tests in test-e2e/faults/.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { CheckpointStore } from "../src/engine/storage/store.ts";

export interface RunAudit {
  metricsRows: number;
  /** Steps of metrics.jsonl, in file order. */
  steps: number[];
  duplicateSteps: number[];
  /** Rows whose step is not greater than the row before. */
  outOfOrder: number;
  /** Problems reading a file: malformed lines, a torn final line. */
  malformed: string[];
  checkpointRecords: number;
  /** Listed state_path / sampler_path that do not load, with why. */
  unloadable: string[];
  loaded: number;
  finalRecord: boolean;
  /** Temporary files and folders left in the run directory or the checkpoint store. */
  leftovers: string[];
}

/** Every record of a JSONL file, noting each line that is not whole JSON (including a torn tail). */
export function readJsonlStrict(path: string, problems: string[]): Record<string, unknown>[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  if (text.length > 0 && !text.endsWith("\n")) problems.push(`${path}: torn final line (no newline)`);
  const out: Record<string, unknown>[] = [];
  text.split("\n").forEach((line, i) => {
    if (line === "") return;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      problems.push(`${path}:${i + 1}: malformed line ${JSON.stringify(line.slice(0, 60))}`);
    }
  });
  return out;
}

function findLeftovers(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (/^\.(tmp|old|trash)-/.test(name) || name.endsWith(".tmp") || /\.tmp-/.test(name)) out.push(path);
    else if (statSync(path).isDirectory()) findLeftovers(path, out);
  }
}

export function auditRun(logDir: string, storeDir: string): RunAudit {
  const malformed: string[] = [];
  const metrics = readJsonlStrict(join(logDir, "metrics.jsonl"), malformed);
  const steps = metrics.map((r) => Number(r.step));
  const seen = new Set<number>();
  const duplicateSteps: number[] = [];
  let outOfOrder = 0;
  steps.forEach((s, i) => {
    if (seen.has(s)) duplicateSteps.push(s);
    seen.add(s);
    if (i > 0 && !(s > steps[i - 1]!)) outOfOrder++;
  });
  const records = readJsonlStrict(join(logDir, "checkpoints.jsonl"), malformed);
  // Opening the store without sweeping: the audit must see what the runs left.
  const store = new CheckpointStore(storeDir, { sweep: false });
  const unloadable: string[] = [];
  let loaded = 0;
  for (const r of records) {
    for (const [key, optimizer] of [
      ["state_path", true],
      ["sampler_path", false],
    ] as const) {
      const path = r[key];
      if (typeof path !== "string") continue;
      try {
        const ck = store.load(path, { optimizer });
        if (ck.tensors.size === 0) throw new Error("no tensors");
        loaded++;
      } catch (err) {
        unloadable.push(`${r.name} ${key} ${path}: ${(err as Error).message.split("\n")[0]}`);
      }
    }
  }
  const leftovers: string[] = [];
  findLeftovers(logDir, leftovers);
  findLeftovers(storeDir, leftovers);
  return {
    metricsRows: metrics.length,
    steps,
    duplicateSteps,
    outOfOrder,
    malformed,
    checkpointRecords: records.length,
    unloadable,
    loaded,
    finalRecord: records.some((r) => r.final === true || r.name === "final"),
    leftovers,
  };
}

/** Problems an audit found, as lines; empty when the run is whole. */
export function auditProblems(a: RunAudit, expect: { finalRecord?: boolean; lastStep?: number } = {}): string[] {
  const out = [...a.malformed, ...a.unloadable, ...a.leftovers.map((l) => `leftover ${l}`)];
  if (a.duplicateSteps.length > 0) out.push(`duplicate steps ${a.duplicateSteps.join(", ")}`);
  if (a.outOfOrder > 0) out.push(`${a.outOfOrder} rows out of order`);
  if (expect.finalRecord && !a.finalRecord) out.push("no final checkpoint record");
  if (expect.lastStep !== undefined) {
    const missing = Array.from({ length: expect.lastStep + 1 }, (_, i) => i).filter((s) => !a.steps.includes(s));
    if (missing.length > 0) out.push(`missing steps ${missing.join(", ")}`);
  }
  return out;
}
