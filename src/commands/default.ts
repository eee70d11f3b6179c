// Bare `cookbook`: opens the TUI once src/tui/ provides one; until then prints the runs table.
import { existsSync } from "node:fs";
import { defaultLogRoot } from "../runs/paths.ts";
import { printRuns } from "./runs.ts";
import { defineCommand } from "./types.ts";

/** The TUI's entry module exports `startTui(): Promise<boolean>` (false: no terminal, nothing shown). */
const TUI_ENTRIES = ["../tui/index.tsx", "../tui/index.ts"];

async function startTuiIfPresent(): Promise<boolean> {
  for (const entry of TUI_ENTRIES) {
    const url = new URL(entry, import.meta.url);
    if (!existsSync(url)) continue;
    const mod = (await import(url.href)) as { startTui?: () => Promise<boolean> };
    if (typeof mod.startTui !== "function") continue;
    return mod.startTui();
  }
  return false;
}

export const defaultCommand = defineCommand<object>({
  command: "$0",
  describe: "Open the terminal UI (for now: list runs under the default log root)",
  handler: async () => {
    if (!(await startTuiIfPresent())) printRuns(defaultLogRoot(), false);
  },
});
