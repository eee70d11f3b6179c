// The one keymap: every command with its keys, scope and description. The dispatcher resolves
// keys through it, the `?` overlay and the footer hints are rendered from it, so help cannot drift.
import type { Key } from "ink";

export type Scope = "global" | "list" | "home" | "launch" | "run" | "dashboard" | "transcripts" | "timing" | "checkpoints";

export type CommandId =
  | "quit"
  | "back"
  | "help"
  | "up"
  | "down"
  | "top"
  | "bottom"
  | "pageUp"
  | "pageDown"
  | "open"
  | "filter"
  | "nextPane"
  | "paneDashboard"
  | "paneTranscripts"
  | "paneTiming"
  | "paneCheckpoints"
  | "refresh"
  | "stopRun"
  | "resumeRun"
  | "deleteRun"
  | "checkpointNow"
  | "smoothing"
  | "xAxis"
  | "pickMetric"
  | "overlay"
  | "logPane"
  | "cursorLeft"
  | "cursorRight"
  | "jumpTranscripts"
  | "prevIteration"
  | "nextIteration"
  | "sortReward"
  | "groupView"
  | "histogram"
  | "resumeFromCheckpoint"
  | "chat"
  | "copyPath"
  | "deleteCheckpoint"
  | "submit";

export interface Binding {
  id: CommandId;
  /** Ink input characters (`q`, `?`) or key names (`escape`, `return`, `tab`, `up`, `ctrl+c`). */
  keys: readonly string[];
  scopes: readonly Scope[];
  description: string;
  /** Short label for the footer; bindings without one are only in the help overlay. */
  hint?: string;
  /** What the footer shows for the keys when not the first key (e.g. `1-4`). */
  hintKey?: string;
}

export const KEYMAP: readonly Binding[] = [
  { id: "quit", keys: ["q"], scopes: ["global"], description: "Quit the UI (runs keep going in the background)", hint: "quit" },
  { id: "back", keys: ["escape"], scopes: ["global"], description: "Back / cancel", hint: "back" },
  { id: "help", keys: ["?"], scopes: ["global"], description: "Show or hide this help", hint: "help" },
  { id: "up", keys: ["k", "up"], scopes: ["list"], description: "Move up" },
  { id: "down", keys: ["j", "down"], scopes: ["list"], description: "Move down", hint: "move" },
  { id: "top", keys: ["g", "home"], scopes: ["list"], description: "Go to the top" },
  { id: "bottom", keys: ["G", "end"], scopes: ["list"], description: "Go to the bottom" },
  { id: "pageUp", keys: ["pageup", "ctrl+u"], scopes: ["list"], description: "Page up" },
  { id: "pageDown", keys: ["pagedown", "ctrl+d"], scopes: ["list"], description: "Page down" },
  { id: "nextPane", keys: ["tab"], scopes: ["home", "launch", "dashboard", "transcripts"], description: "Next pane / field group", hint: "pane" },
  { id: "open", keys: ["return"], scopes: ["home", "dashboard", "transcripts", "launch"], description: "Open / launch / edit the selection", hint: "open" },
  { id: "filter", keys: ["/"], scopes: ["home", "dashboard", "transcripts"], description: "Filter (metrics: words, !word excludes; transcripts: reward>0.5 reward<1 tag:name)", hint: "filter" },
  { id: "paneDashboard", keys: ["1"], scopes: ["run"], description: "Run: charts dashboard" },
  { id: "paneTranscripts", keys: ["2"], scopes: ["run"], description: "Run: transcripts" },
  { id: "paneTiming", keys: ["3"], scopes: ["run"], description: "Run: timing breakdown" },
  { id: "paneCheckpoints", keys: ["4"], scopes: ["run"], description: "Run: checkpoints", hint: "panes", hintKey: "1-4" },
  { id: "refresh", keys: ["R"], scopes: ["home"], description: "Refresh the runs list" },
  { id: "stopRun", keys: ["S"], scopes: ["home", "run"], description: "Stop the run: SIGINT (save and stop), SIGTERM then SIGKILL if it lingers", hint: "stop" },
  { id: "resumeRun", keys: ["r"], scopes: ["home", "dashboard"], description: "Resume the run in the background (same recipe and args, resume from its last checkpoint)" },
  { id: "deleteRun", keys: ["D"], scopes: ["home"], description: "Delete the run directory (type its name to confirm; live runs are refused)", hint: "delete" },
  { id: "checkpointNow", keys: ["C"], scopes: ["run"], description: "Save a checkpoint now (SIGUSR1)", hint: "ckpt now" },
  { id: "smoothing", keys: ["e"], scopes: ["dashboard"], description: "Toggle EMA smoothing (raw series stays visible, dimmed)", hint: "smooth" },
  { id: "xAxis", keys: ["x"], scopes: ["dashboard"], description: "X axis: step or elapsed time", hint: "x-axis" },
  { id: "pickMetric", keys: ["m"], scopes: ["dashboard"], description: "Add or remove charts from the filterable metric list", hint: "metrics" },
  { id: "overlay", keys: ["o"], scopes: ["dashboard"], description: "Overlay other runs (stable colours)", hint: "overlay" },
  { id: "logPane", keys: ["L"], scopes: ["dashboard"], description: "Show or hide the logs.log pane" },
  { id: "cursorLeft", keys: ["h", "left"], scopes: ["dashboard", "timing"], description: "Step cursor left (shift: ×10 with H)" },
  { id: "cursorRight", keys: ["l", "right"], scopes: ["dashboard", "timing"], description: "Step cursor right" },
  { id: "jumpTranscripts", keys: ["t"], scopes: ["dashboard", "timing"], description: "Open the transcripts of the step under the cursor", hint: "transcripts@step" },
  { id: "prevIteration", keys: ["h", "left", "["], scopes: ["transcripts"], description: "Previous iteration", hint: "iter" },
  { id: "nextIteration", keys: ["l", "right", "]"], scopes: ["transcripts"], description: "Next iteration" },
  { id: "sortReward", keys: ["s"], scopes: ["transcripts"], description: "Sort: reward ↓, reward ↑, index", hint: "sort" },
  { id: "groupView", keys: ["w"], scopes: ["transcripts"], description: "Group view: all trajectories of the selected group side by side", hint: "group" },
  { id: "histogram", keys: ["H"], scopes: ["transcripts"], description: "Reward histogram of the iteration", hint: "histogram" },
  { id: "resumeFromCheckpoint", keys: ["r"], scopes: ["checkpoints"], description: "Start a new background run from the selected checkpoint", hint: "resume from" },
  { id: "chat", keys: ["return"], scopes: ["checkpoints"], description: "Chat with (sample from) the selected checkpoint", hint: "chat" },
  { id: "copyPath", keys: ["y"], scopes: ["checkpoints"], description: "Copy the tinker:// path (OSC 52) and show it", hint: "copy" },
  { id: "deleteCheckpoint", keys: ["d"], scopes: ["checkpoints"], description: "Delete the checkpoint (RestClient) and its record", hint: "delete" },
  { id: "submit", keys: ["ctrl+s"], scopes: ["launch"], description: "Launch with the form's values", hint: "launch" },
];

const NAMED: Record<string, (k: Key) => boolean> = {
  escape: (k) => k.escape,
  return: (k) => k.return,
  tab: (k) => k.tab && !k.shift,
  up: (k) => k.upArrow,
  down: (k) => k.downArrow,
  left: (k) => k.leftArrow,
  right: (k) => k.rightArrow,
  pageup: (k) => k.pageUp,
  pagedown: (k) => k.pageDown,
  home: (k) => Boolean((k as Key & { home?: boolean }).home),
  end: (k) => Boolean((k as Key & { end?: boolean }).end),
  backspace: (k) => k.backspace || k.delete,
};

export function keyMatches(spec: string, input: string, key: Key): boolean {
  if (spec.startsWith("ctrl+")) return key.ctrl && input === spec.slice(5);
  const named = NAMED[spec];
  if (named) return named(key);
  return !key.ctrl && !key.meta && input === spec;
}

/** Which scopes are active for a screen: its own, `list` for list screens, `run` for run screens. */
export function scopesFor(screen: string): Scope[] {
  const run = ["dashboard", "transcripts", "timing", "checkpoints"].includes(screen);
  return ["global", "list", ...(run ? (["run"] as Scope[]) : []), screen as Scope];
}

/**
 * The command a key means on a screen. Screen-specific bindings win over shared ones, so `h` is
 * "previous iteration" on transcripts even though it is a cursor key elsewhere.
 */
export function resolveCommand(screen: string, input: string, key: Key): CommandId | undefined {
  const scopes = scopesFor(screen);
  const order: Scope[] = [screen as Scope, "run", "list", "global", "home"];
  for (const scope of order) {
    if (!scopes.includes(scope)) continue;
    const hit = KEYMAP.find((b) => b.scopes.includes(scope) && b.keys.some((k) => keyMatches(k, input, key)));
    if (hit) return hit.id;
  }
  return undefined;
}

export function bindingsFor(screen: string): Binding[] {
  const scopes = scopesFor(screen);
  return KEYMAP.filter((b) => b.scopes.some((s) => scopes.includes(s)));
}

const KEY_LABELS: Record<string, string> = { escape: "esc", return: "enter", up: "↑", down: "↓", left: "←", right: "→", pageup: "PgUp", pagedown: "PgDn" };

export function keyLabel(spec: string): string {
  return KEY_LABELS[spec] ?? spec;
}

/**
 * Footer hints for a screen as `key label` pairs: the screen's own first, then shared ones, with
 * quit/back/help always kept at the end; trimmed to fit the width.
 */
export function footerHints(screen: string, width: number): string {
  const all = bindingsFor(screen).filter((b) => b.hint !== undefined);
  const always = all.filter((b) => b.scopes.includes("global"));
  const rest = all.filter((b) => !b.scopes.includes("global"));
  rest.sort((a, b) => Number(b.scopes.includes(screen as Scope)) - Number(a.scopes.includes(screen as Scope)));
  const label = (b: Binding): string => `${b.hintKey ?? keyLabel(b.keys[0])} ${b.hint}`;
  const tail = always.map(label);
  let used = tail.reduce((n, t) => n + t.length + 2, 0);
  const parts: string[] = [];
  for (const b of rest) {
    const text = label(b);
    if (used + text.length + 2 > width) break;
    parts.push(text);
    used += text.length + 2;
  }
  return [...parts, ...tail].join("  ").slice(0, width);
}

/** Help overlay lines: `keys  description`, grouped by scope. */
export function helpLines(screen: string): { section: string; rows: [string, string][] }[] {
  const active = scopesFor(screen);
  const sections = active.map((section) => ({ section, rows: [] as [string, string][] }));
  for (const b of bindingsFor(screen)) {
    // Each binding once, under the most specific active scope it belongs to.
    const scope = [...active].reverse().find((s) => b.scopes.includes(s));
    sections.find((x) => x.section === scope)?.rows.push([b.keys.map(keyLabel).join(" "), b.description]);
  }
  return sections.filter((s) => s.rows.length > 0).reverse();
}
