// The screen registry: every screen's name, component, key scope, shared scopes, pane key and
// own bindings, in one list. The app renders routes through it, the keymap (dispatch, help,
// footer) is assembled from it, and the run panes (1–4) are its entries with a pane key.
// Adding a screen: write the screen file(s), add one entry here (docs/contributing.md).
import type { ReactNode } from "react";
import { type Binding, Keymap, SHARED_BINDINGS, type ScopedBinding, type SharedScope } from "../../keys/keymap.ts";
import type { Route } from "../../state/app.ts";
import { Batch, type BatchRoute } from "./batch/Batch.tsx";
import { BATCH_KEYS } from "./batch/batchKeys.ts";
import { Checkpoints, type CheckpointsRoute } from "./checkpoints/Checkpoints.tsx";
import { CHECKPOINTS_KEYS } from "./checkpoints/checkpointsKeys.ts";
import { Dashboard, type DashboardRoute } from "./dashboard/Dashboard.tsx";
import { Evals, type EvalsRoute } from "./evals/Evals.tsx";
import { EVALS_KEYS } from "./evals/evalsKeys.ts";
import { DASHBOARD_KEYS } from "./dashboard/dashboardKeys.ts";
import { Home, type HomeRoute } from "./home/Home.tsx";
import { HOME_KEYS } from "./home/homeKeys.ts";
import { Launch, type LaunchRoute } from "./launch/Launch.tsx";
import { Play, type PlayRoute } from "./play/Play.tsx";
import { LAUNCH_KEYS } from "./launch/launchKeys.ts";
import { TIMING_KEYS, Timing, type TimingRoute } from "./timing/Timing.tsx";
import { TRANSCRIPTS_KEYS } from "./transcripts/transcriptsKeys.ts";
import { Transcripts, type TranscriptsRoute } from "./transcripts/Transcripts.tsx";

export interface ScreenProps<R extends Route> {
  route: R;
  rows: number;
  width: number;
}

export interface ScreenEntry<R extends Route = Route> {
  name: R["name"];
  component: (props: ScreenProps<R>) => ReactNode;
  /** The scope of its own bindings in the keymap (help shows it as the section title). */
  keyScope: string;
  /** Shared scopes it answers besides `global`: `list` (cursor keys), `run` (run panes, stop). */
  shared: readonly SharedScope[];
  /** A run pane: this key switches any run screen to this one on the same run. */
  paneKey?: string;
  /** Shown in help for the pane key. */
  title: string;
  bindings: readonly Binding[];
}

/** Erases the route type once the entry is checked against it (the app looks entries up by name). */
export function screen<R extends Route>(entry: ScreenEntry<R>): ScreenEntry {
  return entry as unknown as ScreenEntry;
}

export const SCREENS: readonly ScreenEntry[] = [
  screen<HomeRoute>({ name: "home", component: Home, keyScope: "home", shared: ["list"], title: "recipes and runs", bindings: HOME_KEYS }),
  screen<LaunchRoute>({ name: "launch", component: Launch, keyScope: "launch", shared: ["list"], title: "launch form", bindings: LAUNCH_KEYS }),
  screen<DashboardRoute>({
    name: "dashboard",
    component: Dashboard,
    keyScope: "dashboard",
    shared: ["list", "run"],
    paneKey: "1",
    title: "charts dashboard",
    bindings: DASHBOARD_KEYS,
  }),
  screen<TranscriptsRoute>({
    name: "transcripts",
    component: Transcripts,
    keyScope: "transcripts",
    shared: ["list", "run"],
    paneKey: "2",
    title: "transcripts",
    bindings: TRANSCRIPTS_KEYS,
  }),
  screen<TimingRoute>({
    name: "timing",
    component: Timing,
    keyScope: "timing",
    shared: ["list", "run"],
    paneKey: "3",
    title: "timing breakdown",
    bindings: TIMING_KEYS,
  }),
  screen<CheckpointsRoute>({
    name: "checkpoints",
    component: Checkpoints,
    keyScope: "checkpoints",
    shared: ["list", "run"],
    paneKey: "4",
    title: "checkpoints",
    bindings: CHECKPOINTS_KEYS,
  }),
  screen<EvalsRoute>({ name: "evals", component: Evals, keyScope: "evals", shared: ["list"], title: "eval results", bindings: EVALS_KEYS }),
  screen<BatchRoute>({
    name: "batch",
    component: Batch,
    keyScope: "batch",
    shared: ["list"],
    title: "batches: runs, key metrics, comparison (cookbook batch)",
    bindings: BATCH_KEYS,
  }),
  screen<PlayRoute>({
    name: "play",
    component: Play,
    keyScope: "play",
    shared: [],
    title: "play an environment by hand (every key types; esc leaves)",
    bindings: [],
  }),
];

const PANE_PREFIX = "pane:";

/** The screen a pane command switches to (`pane:transcripts` → `transcripts`). */
export function paneTarget(cmd: string): string | undefined {
  return cmd.startsWith(PANE_PREFIX) ? cmd.slice(PANE_PREFIX.length) : undefined;
}

/** One `run`-scope binding per pane key; the last carries the footer hint for the whole range. */
function paneBindings(screens: readonly ScreenEntry[]): ScopedBinding[] {
  const panes = screens.filter((s) => s.paneKey !== undefined);
  return panes.map((s, i) => ({
    scope: "run",
    id: `${PANE_PREFIX}${s.name}`,
    keys: [s.paneKey!],
    description: `Run: ${s.title}`,
    ...(i === panes.length - 1 ? { hint: "panes", hintKey: `${panes[0].paneKey}-${s.paneKey}` } : {}),
  }));
}

export function buildKeymap(screens: readonly ScreenEntry[]): Keymap {
  const table: ScopedBinding[] = [
    ...SHARED_BINDINGS,
    ...paneBindings(screens),
    ...screens.flatMap((s) => s.bindings.map((b) => ({ ...b, scope: s.keyScope }))),
  ];
  return new Keymap(table, new Map(screens.map((s) => [s.name, { own: s.keyScope, shared: s.shared }])));
}

export interface ScreenRegistry {
  screens: readonly ScreenEntry[];
  keymap: Keymap;
  entry(name: string): ScreenEntry | undefined;
}

export function makeRegistry(screens: readonly ScreenEntry[]): ScreenRegistry {
  const names = new Set<string>();
  for (const s of screens) {
    if (names.has(s.name)) throw new Error(`screen registry: two screens named ${s.name}`);
    names.add(s.name);
  }
  return { screens, keymap: buildKeymap(screens), entry: (name) => screens.find((s) => s.name === name) };
}

/** The app's registry (tests may render with a registry that has more screens). */
export const REGISTRY = makeRegistry(SCREENS);
export const KEYMAP = REGISTRY.keymap;
