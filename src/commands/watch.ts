// `cookbook watch <run_dir>`: the dashboard of one run. On a terminal it opens the UI; with
// --once (or without a terminal) it prints a text snapshot, charts included, and exits.
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { UsageError } from "../config/errors.ts";
import { expandLogPath, isRunDir, readCheckpoints, readLogTail, readMetricColumns, readRunConfig, runState, inferTrainingKind } from "../runs/index.ts";
import { renderSnapshot } from "../tui/core/snapshot.ts";
import { EMA_WEIGHT } from "../tui/core/dashboard.ts";
import { defineCommand } from "./types.ts";

interface WatchArgs {
  run_dir: string;
  once?: boolean;
  width?: number;
  height?: number;
  metric?: string[];
  smooth?: boolean;
  color?: boolean;
}

export function watchSnapshot(dir: string, options: { width: number; chartRows: number; extra?: string[]; smooth?: boolean; color: boolean }): string {
  const metrics = readMetricColumns(dir);
  const config = readRunConfig(dir);
  let checkpoints: ReturnType<typeof readCheckpoints> = [];
  try {
    checkpoints = readCheckpoints(dir);
  } catch {
    checkpoints = [];
  }
  return renderSnapshot({
    name: basename(dir),
    state: runState(dir),
    kind: inferTrainingKind(config) ?? (metrics.keys.some((k) => k.startsWith("env/all/")) ? "rl" : undefined),
    metrics,
    checkpoints,
    logLines: readLogTail(dir, 8),
    extraCharts: options.extra,
    width: options.width,
    chartRows: options.chartRows,
    color: options.color,
    smoothing: options.smooth ? EMA_WEIGHT : 0,
  });
}

export const watchCommand = defineCommand<WatchArgs>({
  builder: (y) =>
    y
      .positional("run_dir", { type: "string", demandOption: true, describe: "the run directory (log_path)" })
      .option("once", { type: "boolean", describe: "print a text snapshot of the dashboard and exit (for ssh, CI, scripts)" })
      .option("width", { type: "number", describe: "snapshot width in columns (default: terminal width or 100)" })
      .option("height", { type: "number", describe: "rows per chart in the snapshot (default 12)" })
      .option("metric", { type: "string", array: true, describe: "extra metrics to chart in the snapshot" })
      .option("smooth", { type: "boolean", describe: "EMA-smooth the snapshot's charts" })
      .option("color", { type: "boolean", describe: "colour the snapshot's charts (default: when stdout is a terminal)" }),
  handler: async (argv) => {
    const dir = expandLogPath(argv.run_dir);
    if (!existsSync(dir)) throw new UsageError(`run directory ${dir} does not exist`);
    if (!isRunDir(dir)) throw new UsageError(`${dir} is not a run directory (no metrics.jsonl, config.json or run.json)`);
    const tty = Boolean(process.stdout.isTTY && process.stdin.isTTY);
    if (argv.once || !tty) {
      const width = argv.width ?? (process.stdout.columns || 100);
      const text = watchSnapshot(dir, {
        width,
        chartRows: argv.height ?? 12,
        extra: argv.metric,
        smooth: argv.smooth,
        color: argv.color ?? Boolean(process.stdout.isTTY),
      });
      process.stdout.write(`${text}\n`);
      return;
    }
    const { startTui } = await import("../tui/index.tsx");
    await startTui({ runDir: dir });
  },
});
