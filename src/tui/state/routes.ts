// Every screen's route: its name and the parameters it opens with, in one table the compiler
// checks. A route built anywhere (a key handler, the command line, a pane switch) must match its
// screen's parameters, and the screen registry must have one entry per name with a component that
// takes exactly that route.

/** Where the home screen was left, kept in its route so esc comes back to the same place. */
export interface HomePlace {
  pane: "recipes" | "runs";
  recipeCursor: number;
  runCursor: number;
  filter: string;
}

/** Where the batch screen was left, kept in its route when leaving for a run's dashboard. */
export interface BatchPlace {
  /** The open batch's directory; undefined shows the batches list. */
  open?: string;
  batchCursor: number;
  runCursor: number;
}

export interface RouteParams {
  home: { place?: HomePlace };
  launch: { recipe: string; preset?: readonly string[]; logPath?: string };
  dashboard: { runDir: string };
  transcripts: { runDir: string; step?: number };
  timing: { runDir: string; step?: number };
  checkpoints: { runDir: string };
  evals: Record<never, never>;
  batch: { place?: Partial<BatchPlace> };
  play: { recipe: string; args?: string[] };
}

export type RouteName = keyof RouteParams;

/** The route of one screen. */
export type RouteOf<N extends RouteName> = { readonly name: N } & Readonly<RouteParams[N]>;

/** Any screen's route. */
export type Route = { [N in RouteName]: RouteOf<N> }[RouteName];

/** Screens of one run: their route is the run directory (and optional extras), so the pane keys can switch between them. */
export type RunRouteName = {
  [N in RouteName]: RouteParams[N] extends { runDir: string } ? ({ runDir: string } extends RouteParams[N] ? N : never) : never;
}[RouteName];

/** The run a route shows, if it is a run screen's. */
export function routeRunDir(route: Route): string | undefined {
  return "runDir" in route ? route.runDir : undefined;
}
