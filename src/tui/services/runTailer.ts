// Follows one run directory: metrics rows (incremental), logs.log tail, checkpoints and liveness.
// Polls on a timer and emits at most one "change" per tick, so the UI redraws at ≤ 1000/interval Hz
// however fast the run appends. Shared per directory with reference counting.
import { EventEmitter } from "node:events";
import { statSync } from "node:fs";
import { join } from "node:path";
import {
  type CheckpointRecord,
  LOG_FILE,
  LogTailReader,
  type MetricsTailReader,
  type RunState,
  STDOUT_FILE,
  type TrainingKind,
  inferTrainingKind,
  metricsTailReader,
  readCheckpoints,
  readRunConfig,
  runState,
} from "../../runs/index.ts";
import { readTailText } from "../../log/tail.ts";
import { type MetricRow, SeriesCache, elapsedSeconds } from "../core/series.ts";

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Whole JSON-object lines of a text (a torn or malformed line is skipped). */
function parseRows(text: string): MetricRow[] {
  const rows: MetricRow[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === "object" && v !== null && !Array.isArray(v)) rows.push(v as MetricRow);
    } catch {
      // the torn last line of a live run; the full read sees it whole later
    }
  }
  return rows;
}

export const DEFAULT_POLL_MS = 100;
const SLOW_EVERY = 10;
/**
 * metrics.jsonl larger than this opens from its last TAIL_FIRST_BYTES (~450 rows of six metrics,
 * ~200 of twenty: more than a chart of a 160-column terminal has columns) so the first frame is
 * quick; the whole file is read right after it and replaces those rows. 256 KiB cost the first
 * frame ~6 ms more of parsing.
 */
export const TAIL_FIRST_BYTES = 64 << 10;

export interface RunSnapshot {
  dir: string;
  /** Bumped on every change; memo key for derived views. */
  version: number;
  rows: MetricRow[];
  /** Elapsed seconds per row (running sum of step durations). */
  elapsed: number[];
  keys: string[];
  logLines: string[];
  checkpoints: CheckpointRecord[];
  state: RunState;
  kind?: TrainingKind;
  config?: Record<string, unknown>;
  /** Incremental per-metric series over `rows` (shared across snapshots of this run). */
  cache: SeriesCache;
  /** True while `rows` holds only the end of a large metrics.jsonl (the rest is being read). */
  partial?: boolean;
}

export class RunTailer extends EventEmitter<{ change: [RunSnapshot] }> {
  private readonly metrics: MetricsTailReader;
  private readonly log: LogTailReader;
  private readonly stdout: LogTailReader;
  private readonly keySet = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private ckptStamp = "";
  /** Set while the first frame shows only the tail of a large metrics.jsonl. */
  private fullReadPending = false;
  snapshot: RunSnapshot;

  constructor(
    readonly dir: string,
    options: { tailFirstBytes?: number } = {},
  ) {
    super();
    this.metrics = metricsTailReader(dir);
    this.log = new LogTailReader(join(dir, LOG_FILE), 500);
    this.stdout = new LogTailReader(join(dir, STDOUT_FILE), 200);
    const rows: MetricRow[] = [];
    const elapsed: number[] = [];
    this.snapshot = {
      dir,
      version: 0,
      rows,
      elapsed,
      keys: [],
      logLines: [],
      checkpoints: [],
      state: { status: "idle", live: false },
      cache: new SeriesCache(rows, elapsed),
    };
    const tailBytes = options.tailFirstBytes ?? TAIL_FIRST_BYTES;
    if (fileSize(join(dir, "metrics.jsonl")) > tailBytes) this.openFromTail(tailBytes);
    this.poll(true);
  }

  /** The first frame's rows: whole lines of the file's last `bytes`, time axis counted from them. */
  private openFromTail(bytes: number): void {
    const rows = parseRows(readTailText(join(this.dir, "metrics.jsonl"), bytes).text);
    const s = this.snapshot;
    this.appendRows(rows);
    s.partial = true;
    this.fullReadPending = true;
    // After the first frame is drawn: the whole file, replacing the tail rows in one change.
    setImmediate(() => this.readWholeFile());
  }

  private readWholeFile(): void {
    if (!this.fullReadPending) return;
    this.fullReadPending = false;
    const s = this.snapshot;
    s.rows = [];
    s.elapsed = [];
    s.cache = new SeriesCache(s.rows, s.elapsed);
    s.partial = false;
    this.keySet.clear();
    s.keys = [];
    this.appendRows(this.metrics.read());
    this.snapshot = { ...s, version: s.version + 1 };
    this.emit("change", this.snapshot);
  }

  private appendRows(fresh: readonly MetricRow[]): void {
    const s = this.snapshot;
    const keysBefore = s.keys.length;
    const startT = s.elapsed.length > 0 ? s.elapsed[s.elapsed.length - 1] : 0;
    const add = elapsedSeconds(fresh);
    for (let i = 0; i < fresh.length; i++) {
      const r = fresh[i];
      s.rows.push(r);
      s.elapsed.push(startT + add[i]);
      for (const k in r) if (!this.keySet.has(k) && k !== "step" && typeof r[k] === "number") this.keySet.add(k);
    }
    if (this.keySet.size !== keysBefore || s.keys.length === 0) s.keys = [...this.keySet].sort();
  }

  /** Reads what changed; returns true (and emits) when anything did. */
  poll(full = false): boolean {
    let changed = false;
    const s = this.snapshot;
    const restarts = this.metrics.restarts;
    // While the whole file is still to be read, its reader must not start tailing from the top.
    const fresh = this.fullReadPending ? [] : this.metrics.read();
    if (this.metrics.restarts !== restarts) {
      // metrics.jsonl was rewritten (run dir deleted and recreated): start the history over.
      s.rows = [];
      s.elapsed = [];
      s.cache = new SeriesCache(s.rows, s.elapsed);
      changed = true;
    }
    if (fresh.length > 0) {
      this.appendRows(fresh);
      changed = true;
    }
    if (this.log.read()) {
      s.logLines = this.log.lines;
      changed = true;
    } else if (this.log.lines.length === 0 && this.stdout.read()) {
      s.logLines = this.stdout.lines;
      changed = true;
    }
    if (full || this.tick % SLOW_EVERY === 0) changed = this.slowPoll() || changed;
    this.tick++;
    if (changed) {
      // New identity for consumers that compare snapshots; arrays are shared (append-only).
      this.snapshot = { ...s, version: s.version + 1 };
      this.emit("change", this.snapshot);
    }
    return changed;
  }

  private slowPoll(): boolean {
    let changed = false;
    const s = this.snapshot;
    const state = runState(this.dir);
    if (state.status !== s.state.status || state.live !== s.state.live || state.manifest?.pid !== s.state.manifest?.pid) changed = true;
    s.state = state;
    let stamp = "";
    try {
      const st = statSync(join(this.dir, "checkpoints.jsonl"));
      stamp = `${st.size}:${st.mtimeMs}`;
    } catch {
      stamp = "";
    }
    if (stamp !== this.ckptStamp) {
      this.ckptStamp = stamp;
      try {
        s.checkpoints = stamp ? readCheckpoints(this.dir) : [];
      } catch {
        s.checkpoints = [];
      }
      changed = true;
    }
    if (s.config === undefined) {
      s.config = readRunConfig(this.dir);
      if (s.config !== undefined) {
        s.kind = inferTrainingKind(s.config) ?? (s.keys.some((k) => k.startsWith("env/")) ? "rl" : undefined);
        changed = true;
      }
    }
    if (s.kind === undefined && s.keys.some((k) => k.startsWith("env/all/"))) {
      s.kind = "rl";
      changed = true;
    }
    return changed;
  }

  start(intervalMs = DEFAULT_POLL_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.poll(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

const LINGER_MS = 30_000;
const shared = new Map<string, { tailer: RunTailer; refs: number }>();

/** A started tailer for `dir`, shared with other users; call the returned release when done. */
export function acquireTailer(dir: string, intervalMs = DEFAULT_POLL_MS): { tailer: RunTailer; release: () => void } {
  let entry = shared.get(dir);
  if (!entry) {
    entry = { tailer: new RunTailer(dir), refs: 0 };
    shared.set(dir, entry);
    entry.tailer.start(intervalMs);
  }
  entry.refs++;
  let released = false;
  return {
    tailer: entry.tailer,
    release: () => {
      if (released) return;
      released = true;
      const e = shared.get(dir);
      if (!e) return;
      e.refs--;
      if (e.refs > 0) return;
      // Linger a little: switching between a run's screens should not re-read its whole history.
      const t = setTimeout(() => {
        const now = shared.get(dir);
        if (now && now.refs <= 0) {
          now.tailer.stop();
          shared.delete(dir);
        }
      }, LINGER_MS);
      t.unref();
    },
  };
}
