// `cookbook runs [dir]`: the run directories under dir (default log root) with status and metrics.
import { discoverRuns } from "../runs/discovery.ts";
import { defaultLogRoot, expandLogPath } from "../runs/paths.ts";
import { formatRunsTable, runsAsJson } from "./runsTable.ts";
import { defineCommand } from "./types.ts";

export function printRuns(root: string, json: boolean): void {
  const dir = expandLogPath(root);
  const runs = discoverRuns(dir);
  if (json) process.stdout.write(`${runsAsJson(runs)}\n`);
  else if (runs.length === 0) process.stdout.write(`no runs under ${dir}\n`);
  else process.stdout.write(`${formatRunsTable(runs)}\n`);
}

export const runsCommand = defineCommand<{ dir?: string; json?: boolean }>({
  builder: (y) =>
    y
      .positional("dir", { type: "string", describe: "directory holding runs (default: $COOKBOOK_LOG_ROOT or /tmp/tinker-examples)" })
      .option("json", { type: "boolean", describe: "print JSON for scripts" }),
  handler: (argv) => printRuns(argv.dir ?? defaultLogRoot(), Boolean(argv.json)),
});
