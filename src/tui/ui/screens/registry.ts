// The screen registry: every screen's name, component, key scope, shared scopes, pane key and
// own bindings, in one list. The app renders routes through it, the keymap (dispatch, help,
// footer) is assembled from it, and the run panes (1–4) are its entries with a pane key.
// Adding a screen: write the screen file(s), add its route to state/routes.ts and one entry here
// (docs/contributing.md).
import type { ReactNode } from "react";
import { type Binding, Keymap, SHARED_BINDINGS, type ScopedBinding, type SharedScope } from "../../keys/keymap.ts";
import type { Route, RouteName, RouteOf, RunRouteName } from "../../state/routes.ts";
import { Batch } from "./batch/Batch.tsx";
import { BATCH_KEYS } from "./batch/batchKeys.ts";
import { Checkpoints } from "./checkpoints/Checkpoints.tsx";
import { CHECKPOINTS_KEYS } from "./checkpoints/checkpointsKeys.ts";
import { Dashboard } from "./dashboard/Dashboard.tsx";
import { Evals } from "./evals/Evals.tsx";
import { EVALS_KEYS } from "./evals/evalsKeys.ts";
import { DASHBOARD_KEYS } from "./dashboard/dashboardKeys.ts";
import { Home } from "./home/Home.tsx";
import { HOME_KEYS } from "./home/homeKeys.ts";
import { Launch } from "./launch/Launch.tsx";
import { Play } from "./play/Play.tsx";
import { LAUNCH_KEYS } from "./launch/launchKeys.ts";
import { TIMING_KEYS, Timing } from "./timing/Timing.tsx";
import { TRANSCRIPTS_KEYS } from "./transcripts/transcriptsKeys.ts";
import { Transcripts } from "./transcripts/Transcripts.tsx";

export interface ScreenProps<R> {
  route: R;
  rows: number;
  width: number;
}

/** One screen, typed by its route's name: its component takes exactly that route. */
export interface ScreenEntry<N extends RouteName = RouteName> {
  name: N;
  component: (props: ScreenProps<RouteOf<N>>) => ReactNode;
  /** The scope of its own bindings in the keymap (help shows it as the section title). */
  keyScope: string;
  /** Shared scopes it answers besides `global`: `list` (cursor keys), `run` (run panes, stop). */
  shared: readonly SharedScope[];
  /** A run pane: this key switches any run screen to this one on the same run (run screens only). */
  paneKey?: N extends RunRouteName ? string : never;
  /** Shown in help for the pane key. */
  title: string;
  bindings: readonly Binding[];
}

/** Any screen's entry: a union over the route names, so each entry stays checked against its own route. */
export type AnyScreenEntry = { [N in RouteName]: ScreenEntry<N> }[RouteName];

export const SCREENS: readonly AnyScreenEntry[] = [
  { name: "home", component: Home, keyScope: "home", shared: ["list"], title: "recipes and runs", bindings: HOME_KEYS },
  { name: "launch", component: Launch, keyScope: "launch", shared: ["list"], title: "launch form", bindings: LAUNCH_KEYS },
  {
    name: "dashboard",
    component: Dashboard,
    keyScope: "dashboard",
    shared: ["list", "run"],
    paneKey: "1",
    title: "charts dashboard",
    bindings: DASHBOARD_KEYS,
  },
  {
    name: "transcripts",
    component: Transcripts,
    keyScope: "transcripts",
    shared: ["list", "run"],
    paneKey: "2",
    title: "transcripts",
    bindings: TRANSCRIPTS_KEYS,
  },
  {
    name: "timing",
    component: Timing,
    keyScope: "timing",
    shared: ["list", "run"],
    paneKey: "3",
    title: "timing breakdown",
    bindings: TIMING_KEYS,
  },
  {
    name: "checkpoints",
    component: Checkpoints,
    keyScope: "checkpoints",
    shared: ["list", "run"],
    paneKey: "4",
    title: "checkpoints",
    bindings: CHECKPOINTS_KEYS,
  },
  { name: "evals", component: Evals, keyScope: "evals", shared: ["list"], title: "eval results", bindings: EVALS_KEYS },
  {
    name: "batch",
    component: Batch,
    keyScope: "batch",
    shared: ["list"],
    title: "batches: runs, key metrics, comparison (cookbook batch)",
    bindings: BATCH_KEYS,
  },
  {
    name: "play",
    component: Play,
    keyScope: "play",
    shared: [],
    title: "play an environment by hand (every key types; esc leaves)",
    bindings: [],
  },
];

const PANE_PREFIX = "pane:";

/** One `run`-scope binding per pane key; the last carries the footer hint for the whole range. */
function paneBindings(screens: readonly AnyScreenEntry[]): ScopedBinding[] {
  const panes = screens.filter((s) => s.paneKey !== undefined);
  return panes.map((s, i) => ({
    scope: "run",
    id: `${PANE_PREFIX}${s.name}`,
    keys: [s.paneKey!],
    description: `Run: ${s.title}`,
    ...(i === panes.length - 1 ? { hint: "panes", hintKey: `${panes[0].paneKey}-${s.paneKey}` } : {}),
  }));
}

export function buildKeymap(screens: readonly AnyScreenEntry[]): Keymap {
  const table: ScopedBinding[] = [
    ...SHARED_BINDINGS,
    ...paneBindings(screens),
    ...screens.flatMap((s) => s.bindings.map((b) => ({ ...b, scope: s.keyScope }))),
  ];
  return new Keymap(table, new Map(screens.map((s) => [s.name, { own: s.keyScope, shared: s.shared }])));
}

/** Run panes: entries of run screens with a pane key. */
type PaneEntry = Extract<AnyScreenEntry, { name: RunRouteName }>;
const isPane = (s: AnyScreenEntry): s is PaneEntry => s.paneKey !== undefined;

export interface ScreenRegistry {
  screens: readonly AnyScreenEntry[];
  keymap: Keymap;
  /** The entry that renders `route`: it takes exactly that route. */
  entry<N extends RouteName>(route: RouteOf<N>): ScreenEntry<N> | undefined;
  /** The route a pane command (`pane:<screen>`) switches to on `runDir`; undefined for other commands. */
  paneRoute(cmd: string, runDir: string): Route | undefined;
}

export function makeRegistry(screens: readonly AnyScreenEntry[]): ScreenRegistry {
  const names = new Set<string>();
  for (const s of screens) {
    if (names.has(s.name)) throw new Error(`screen registry: two screens named ${s.name}`);
    names.add(s.name);
  }
  const panes = screens.filter(isPane);
  return {
    screens,
    keymap: buildKeymap(screens),
    // Names are unique, and each listed entry was checked against its own name's route, so the
    // entry named route.name takes RouteOf<N>; the compiler cannot follow a lookup by name.
    entry: <N extends RouteName>(route: RouteOf<N>) => screens.find((s) => s.name === route.name) as ScreenEntry<N> | undefined,
    paneRoute: (cmd, runDir) => {
      const pane = cmd.startsWith(PANE_PREFIX) ? panes.find((s) => `${PANE_PREFIX}${s.name}` === cmd) : undefined;
      return pane === undefined ? undefined : { name: pane.name, runDir };
    },
  };
}

/** The app's registry (tests may render with a registry that has more screens). */
export const REGISTRY = makeRegistry(SCREENS);
export const KEYMAP = REGISTRY.keymap;
