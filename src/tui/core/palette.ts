// Semantic colours in one place: Ink colour names for components and the matching ANSI escapes
// for asciichart, which colours its cells itself. NO_COLOR turns the ANSI side off.
import asciichart from "asciichart";

export const theme = {
  accent: "cyan",
  muted: "gray",
  ok: "green",
  warn: "yellow",
  error: "red",
  selected: "cyan",
  user: "yellow",
  assistant: "green",
  system: "magenta",
  tool: "blue",
} as const;

/** Run colours in assignment order: the first run is always cyan, overlays follow. */
export const RUN_COLORS = ["cyan", "yellow", "magenta", "green", "blue", "red", "white"] as const;
const RUN_ANSI = [asciichart.cyan, asciichart.yellow, asciichart.magenta, asciichart.green, asciichart.blue, asciichart.red, asciichart.white];

export function runColorName(index: number): string {
  return RUN_COLORS[index % RUN_COLORS.length];
}

export function runColorAnsi(index: number): string {
  return RUN_ANSI[index % RUN_ANSI.length];
}

export const DIM_ANSI = asciichart.darkgray;

export function colorEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NO_COLOR === undefined || env.NO_COLOR === "";
}

const STATUS_COLORS: Record<string, string> = {
  running: theme.ok,
  completed: theme.accent,
  failed: theme.error,
  crashed: theme.error,
  stopped: theme.warn,
  stale: theme.warn,
  idle: theme.muted,
};

export function statusColor(status: string): string {
  return STATUS_COLORS[status] ?? theme.muted;
}

export function roleColor(role: string): string {
  if (role === "user") return theme.user;
  if (role === "assistant") return theme.assistant;
  if (role === "system") return theme.system;
  return theme.tool;
}
