// The keymap: every command with its keys, scope and description, in one table. The dispatcher
// resolves keys through it; the `?` overlay and the footer hints are rendered from it, so help
// cannot drift. Shared bindings live here; each screen declares its own bindings beside its
// component, and the screen registry assembles the table (see ui/screens/registry.ts).
import type { Key } from "ink";

/** Scopes every screen may share: `global` always, `list` for cursor keys, `run` for run panes. */
export type SharedScope = "global" | "list" | "run";

export interface Binding {
  id: string;
  /** Ink input characters (`q`, `?`) or key names (`escape`, `return`, `tab`, `up`, `ctrl+c`). */
  keys: readonly string[];
  description: string;
  /** Short label for the footer; bindings without one are only in the help overlay. */
  hint?: string;
  /** What the footer shows for the keys when not the first key (e.g. `1-4`). */
  hintKey?: string;
  /** Also resolved while a text field owns the keyboard (tab, ctrl keys: never typed text). */
  inText?: boolean;
}

export interface ScopedBinding extends Binding {
  /** A shared scope or a screen's own key scope. */
  scope: string;
}

/** Bindings several screens reuse with the same meaning; a screen lists the ones it answers. */
export const COMMON = {
  open: { id: "open", keys: ["return"], description: "Open / launch / edit the selection", hint: "open" },
  filter: { id: "filter", keys: ["/"], description: "Filter the list", hint: "filter" },
  nextPane: { id: "nextPane", keys: ["tab"], description: "Next pane / field group", hint: "pane" },
  stopRun: { id: "stopRun", keys: ["S"], description: "Stop the run: SIGINT (save and stop), SIGTERM then SIGKILL if it lingers", hint: "stop" },
  resumeRun: { id: "resumeRun", keys: ["r"], description: "Resume the run in the background (same recipe and args, resume from its last checkpoint)" },
  cursorLeft: { id: "cursorLeft", keys: ["h", "left"], description: "Step cursor left" },
  cursorRight: { id: "cursorRight", keys: ["l", "right"], description: "Step cursor right" },
  jumpTranscripts: { id: "jumpTranscripts", keys: ["t"], description: "Open the transcripts of the step under the cursor", hint: "transcripts@step" },
} as const satisfies Record<string, Binding>;

export const SHARED_BINDINGS = [
  { scope: "global", id: "quit", keys: ["q"], description: "Quit the UI (runs keep going in the background)", hint: "quit" },
  { scope: "global", id: "back", keys: ["escape"], description: "Back / cancel", hint: "back" },
  { scope: "global", id: "help", keys: ["?"], description: "Show or hide this help", hint: "help" },
  { scope: "list", id: "up", keys: ["k", "up"], description: "Move up" },
  { scope: "list", id: "down", keys: ["j", "down"], description: "Move down", hint: "move" },
  { scope: "list", id: "top", keys: ["g", "home"], description: "Go to the top" },
  { scope: "list", id: "bottom", keys: ["G", "end"], description: "Go to the bottom" },
  { scope: "list", id: "pageUp", keys: ["pageup", "ctrl+u"], description: "Page up" },
  { scope: "list", id: "pageDown", keys: ["pagedown", "ctrl+d"], description: "Page down" },
  { scope: "run", ...COMMON.stopRun },
  { scope: "run", id: "checkpointNow", keys: ["C"], description: "Save a checkpoint now (SIGUSR1)", hint: "ckpt now" },
] as const satisfies readonly ScopedBinding[];

/** The command ids a list of bindings declares (declare the list `as const satisfies readonly Binding[]`). */
export type CommandOf<B extends readonly Binding[]> = B[number]["id"];

type SharedCommand<S extends SharedScope> = Extract<(typeof SHARED_BINDINGS)[number], { scope: S }>["id"];
/** Commands every screen may receive (the app handles them when the screen does not). */
export type GlobalCommand = SharedCommand<"global">;
/** Cursor commands of screens that share the `list` scope. */
export type ListCommand = SharedCommand<"list">;
/** Commands of run screens: stop, checkpoint now, and `pane:<screen>` switches. */
export type RunCommand = SharedCommand<"run"> | `pane:${string}`;

/** No key held: the base of every synthesised key press (pasted characters, tests). */
export const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
} as Key;

/** A key press: NO_KEY with the given flags set. */
export function keyPress(flags: Partial<Key> = {}): Key {
  return { ...NO_KEY, ...flags };
}

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

const KEY_LABELS: Record<string, string> = { escape: "esc", return: "enter", up: "↑", down: "↓", left: "←", right: "→", pageup: "PgUp", pagedown: "PgDn" };

export function keyLabel(spec: string): string {
  return KEY_LABELS[spec] ?? spec;
}

export interface HelpSection {
  section: string;
  rows: [string, string][];
}

/**
 * A keymap table plus which scopes each screen answers (shared ones and its own key scope).
 * Screen-specific bindings win over shared ones, so `h` is "previous iteration" on transcripts
 * even though it is a cursor key elsewhere.
 */
export class Keymap {
  constructor(
    readonly table: readonly ScopedBinding[],
    private readonly screenScopes: ReadonlyMap<string, { own: string; shared: readonly SharedScope[] }>,
  ) {}

  /** Active scopes for a screen, least specific first: global, list, run, its own. */
  scopesFor(screen: string): string[] {
    const s = this.screenScopes.get(screen);
    if (!s) return ["global"];
    return ["global", ...(["list", "run"] as const).filter((x) => s.shared.includes(x)), s.own];
  }

  ownScope(screen: string): string {
    return this.screenScopes.get(screen)?.own ?? screen;
  }

  bindingsFor(screen: string): ScopedBinding[] {
    const scopes = this.scopesFor(screen);
    return this.table.filter((b) => scopes.includes(b.scope));
  }

  /** The command a key means on a screen; while typing only `inText` bindings answer. */
  resolve(screen: string, input: string, key: Key, typing = false): string | undefined {
    for (const scope of this.scopesFor(screen).reverse()) {
      const hit = this.table.find((b) => b.scope === scope && (!typing || b.inText) && b.keys.some((k) => keyMatches(k, input, key)));
      if (hit) return hit.id;
    }
    return undefined;
  }

  /**
   * Footer hints as `key label` pairs: the screen's own first, then shared ones, with
   * quit/back/help always kept at the end; trimmed to fit the width.
   */
  footerHints(screen: string, width: number): string {
    const own = this.ownScope(screen);
    const all = this.bindingsFor(screen).filter((b) => b.hint !== undefined);
    const always = all.filter((b) => b.scope === "global");
    const rest = all.filter((b) => b.scope !== "global");
    rest.sort((a, b) => Number(b.scope === own) - Number(a.scope === own));
    const label = (b: Binding): string => `${b.hintKey ?? keyLabel(b.keys[0])} ${b.hint}`;
    const tail = always.map(label);
    let used = tail.reduce((n, t) => n + t.length + 2, 0);
    const parts: string[] = [];
    for (const b of rest) {
      const text = label(b);
      if (used + text.length + 2 > width) continue;
      parts.push(text);
      used += text.length + 2;
    }
    return [...parts, ...tail].join("  ").slice(0, width);
  }

  /** Help overlay lines: `keys  description`, grouped by scope, the screen's own first. */
  helpLines(screen: string): HelpSection[] {
    return this.scopesFor(screen)
      .reverse()
      .map((section) => ({
        section,
        rows: this.table.filter((b) => b.scope === section).map((b): [string, string] => [b.keys.map(keyLabel).join(" "), b.description]),
      }))
      .filter((s) => s.rows.length > 0);
  }

  /** Keys bound twice within one screen's own scope (a mistake the keymap test reports). */
  clashes(): string[] {
    const out: string[] = [];
    const scopes = new Set(this.table.map((b) => b.scope));
    for (const scope of scopes) {
      const seen = new Map<string, string>();
      for (const b of this.table.filter((x) => x.scope === scope)) {
        for (const k of b.keys) {
          if (seen.has(k)) out.push(`${scope}: ${k} bound to ${seen.get(k)} and ${b.id}`);
          seen.set(k, b.id);
        }
      }
    }
    return out;
  }
}
