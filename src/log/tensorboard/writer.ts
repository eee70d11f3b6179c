// A run's metrics as TensorBoard scalars: `<log_path>/tensorboard/events.out.tfevents.<secs>.<host>.<pid>`,
// the version record first, then one event per logged step. A resumed run starts a new file;
// TensorBoard reads every file of the folder (and drops the steps a restart rewound over).
// metrics.jsonl stays the record of truth: a failed write here is reported once and the writer
// stops, the run goes on.
import { appendFileSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Metrics } from "../metrics.ts";
import { scalarsEvent, tfRecord, versionEvent } from "./events.ts";

export const TENSORBOARD_DIR = "tensorboard";

export interface TensorBoardWriterOptions {
  /** Epoch milliseconds (tests pin it). */
  now?: () => number;
  /** Told once when a write fails; later steps are then skipped. */
  onError?: (message: string) => void;
}

/** The numeric, finite metrics of a step as TensorBoard tags (strings and `step` are not scalars). */
export function scalarsOf(metrics: Metrics): Array<[string, number]> {
  return Object.entries(metrics)
    .filter((e): e is [string, number] => e[0] !== "step" && typeof e[1] === "number" && Number.isFinite(e[1]))
    .sort((a, b) => a[0].localeCompare(b[0]));
}

export class TensorBoardWriter {
  readonly path: string;
  private readonly now: () => number;
  private failed = false;

  constructor(
    logDir: string,
    private readonly options: TensorBoardWriterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    const dir = join(logDir, TENSORBOARD_DIR);
    const started = this.now();
    this.path = join(dir, `events.out.tfevents.${Math.floor(started / 1000)}.${hostname()}.${process.pid}`);
    try {
      mkdirSync(dir, { recursive: true });
      appendFileSync(this.path, tfRecord(versionEvent(started / 1000)));
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.failed = true;
    this.options.onError?.(`TensorBoard events ${this.path}: ${(err as Error).message}; no more TensorBoard events for this run (metrics.jsonl is unaffected)`);
  }

  /** One event holding every scalar of the step, written whole. */
  write(metrics: Metrics, step: number): void {
    if (this.failed) return;
    const scalars = scalarsOf(metrics);
    if (scalars.length === 0) return;
    try {
      appendFileSync(this.path, tfRecord(scalarsEvent(this.now() / 1000, step, scalars)));
    } catch (err) {
      this.fail(err);
    }
  }
}
