// Bare `cookbook`: the terminal UI; without a terminal (a pipe, CI) it prints the runs table instead.
import { defaultLogRoot } from "../runs/paths.ts";
import { printRuns } from "./runs.ts";
import { defineCommand } from "./types.ts";

export const defaultCommand = defineCommand<object>({
  handler: async () => {
    const { startTui } = await import("../tui/index.tsx");
    if (!(await startTui())) printRuns(defaultLogRoot(), false);
  },
});
