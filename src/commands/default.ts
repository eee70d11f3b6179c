// Bare `cookbook`: the terminal UI; without a terminal (a pipe, CI) it prints the runs table instead.
import { existsSync } from "node:fs";
import { defaultLogRoot } from "../runs/paths.ts";
import { printRuns } from "./runs.ts";
import { defineCommand } from "./types.ts";

/** The TUI's entry module exports `startTui(): Promise<boolean>` (false: no terminal, nothing shown). */
const TUI_ENTRIES = ["../tui/index.tsx", "../tui/index.ts", "../tui/index.js"];

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
  handler: async () => {
    if (!(await startTuiIfPresent())) printRuns(defaultLogRoot(), false);
  },
});
