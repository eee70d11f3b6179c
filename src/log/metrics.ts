// The metrics side of a run directory: config.json, metrics.jsonl and a compact console table.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../files/durable.ts";
import { formatColumns, formatValue } from "./format.ts";
import { appendJsonl, readJsonl } from "./jsonl.ts";
import { MetricColumnsWriter } from "./metricColumns.ts";
import type { StepTimer } from "./timing.ts";
import { appendTraceSpans, exportTrace } from "./trace.ts";

export type MetricValue = number | string;
export type Metrics = Record<string, MetricValue>;
export type MetricsRecord = { step: number } & Metrics;

export interface Writable {
  write(text: string): unknown;
}

/** Somewhere else each step's metrics go after metrics.jsonl (e.g. TensorBoard event files). */
export interface MetricsSink {
  write(metrics: Metrics, step: number): void;
  /** The run ended (exit code 0 when it completed or stopped, 1 when it failed): flush what is pending. */
  close?(exitCode: number): Promise<void>;
}

export interface MetricsLoggerOptions {
  /** Where the console table goes; false for none. Default: process.stdout. */
  console?: Writable | false;
  /** Print the table every N steps (metrics.jsonl always gets every step). Default 1. */
  consoleEvery?: number;
  /** Also given every step, after metrics.jsonl. */
  sinks?: readonly MetricsSink[];
}

/** Console keys hidden because they duplicate `:mean`/`:max` for the reader. */
function hiddenOnConsole(key: string): boolean {
  return key.endsWith(":total") || key.endsWith(":count");
}

/** A `Step N` table: keys sorted, floats with 6 significant digits, `:total`/`:count` hidden. */
export function formatMetricsTable(metrics: Metrics, step: number): string {
  const keys = Object.keys(metrics)
    .filter((k) => k !== "step" && !hiddenOnConsole(k))
    .sort();
  const rows = keys.map((k) => [k, formatValue(metrics[k])]);
  return [`Step ${step}`, ...formatColumns(rows).map((line) => `  ${line}`)].join("\n");
}

export class MetricsLogger {
  readonly metricsPath: string;
  readonly configPath: string;
  private readonly console: Writable | false;
  private readonly consoleEvery: number;
  /** The step of the last row written (undefined before the first), for messages about the run. */
  lastStep: number | undefined;

  constructor(
    readonly logDir: string,
    options: MetricsLoggerOptions = {},
  ) {
    mkdirSync(logDir, { recursive: true });
    this.metricsPath = join(logDir, "metrics.jsonl");
    this.configPath = join(logDir, "config.json");
    this.console = options.console ?? process.stdout;
    this.consoleEvery = Math.max(1, options.consoleEvery ?? 1);
    this.sinks = options.sinks ?? [];
  }

  private readonly sinks: readonly MetricsSink[];
  private columns: MetricColumnsWriter | undefined;

  /** Writes config.json (indent 2), replacing any earlier one. */
  logHyperparams(config: unknown): void {
    writeJsonAtomic(this.configPath, config, { context: "the run's config" });
  }

  /** Appends `{step, ...metrics}` to metrics.jsonl and maybe prints the table. */
  logMetrics(metrics: Metrics, step: number): void {
    const record: MetricsRecord = { step, ...metrics };
    record.step = step;
    const written = appendJsonl(this.metricsPath, record, { context: `metrics of step ${step}` });
    this.columns ??= new MetricColumnsWriter(this.metricsPath);
    if (written.start !== undefined && written.end !== undefined) this.columns.append(record, written.start, written.end);
    this.lastStep = step;
    for (const sink of this.sinks) sink.write(metrics, step);
    if (this.console && step % this.consoleEvery === 0) this.console.write(`${formatMetricsTable(metrics, step)}\n`);
  }

  /** Logs a step's metrics with its `time/*` metrics, and adds its spans to the run's trace. */
  logStep(metrics: Metrics, step: number, timer: StepTimer): void {
    this.logMetrics({ ...metrics, ...timer.metrics() }, step);
    appendTraceSpans(this.logDir, step, timer.timeline());
  }

  /**
   * Lets every sink finish its pending writes (uploads) at the end of the run, and writes
   * trace.json, also when a sink fails to close. On a failing run (exitCode ≠ 0) nothing here
   * throws: a sink's or the trace's error must not take the place of the run's own.
   */
  async close(exitCode = 0): Promise<void> {
    const closed = await Promise.allSettled(this.sinks.map((s) => s.close?.(exitCode)));
    const traceError = this.writeTrace();
    if (exitCode !== 0) return;
    const failed = closed.find((r) => r.status === "rejected");
    if (failed !== undefined) throw failed.reason;
    if (traceError !== null) throw traceError;
  }

  /**
   * trace.json from the spans logged so far; the error instead of throwing it (trace.json is
   * derived from trace_events.jsonl and can be made again). Also called on a forced exit.
   */
  writeTrace(): unknown {
    try {
      exportTrace(this.logDir);
      return null;
    } catch (err) {
      return err;
    }
  }
}

/** All metrics records of a run directory (torn final line skipped). */
export function readMetrics(logDir: string): MetricsRecord[] {
  return readJsonl<MetricsRecord>(join(logDir, "metrics.jsonl"));
}
