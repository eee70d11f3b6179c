// Routes are checked by the compiler: a misspelt parameter, a missing run directory, a screen
// registered with another screen's component or a pane key on a screen that has no run are type
// errors. `npm run typecheck` fails if any line marked @ts-expect-error below starts compiling;
// the runtime half checks the lookups the app renders through.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Route } from "../../src/tui/state/routes.ts";
import { type AnyScreenEntry, REGISTRY } from "../../src/tui/ui/screens/registry.ts";
import { Dashboard } from "../../src/tui/ui/screens/dashboard/Dashboard.tsx";

const wrong: unknown[] = [
  // @ts-expect-error `stepp` is not a parameter of the transcripts route
  { name: "transcripts", runDir: "/r", stepp: 3 } satisfies Route,
  // @ts-expect-error the dashboard route needs its run directory
  { name: "dashboard" } satisfies Route,
  // @ts-expect-error no screen is named "dashbaord"
  { name: "dashbaord", runDir: "/r" } satisfies Route,
  // @ts-expect-error the home entry's component must take the home route, not the dashboard's
  { name: "home", component: Dashboard, keyScope: "home", shared: [], title: "t", bindings: [] } satisfies AnyScreenEntry,
  // @ts-expect-error a pane key belongs to screens of one run only
  { name: "evals", component: () => null, keyScope: "evals", shared: [], title: "t", bindings: [], paneKey: "5" } satisfies AnyScreenEntry,
];

test("each route renders through the one entry of its name, and only run screens are panes", () => {
  assert.equal(wrong.length, 5);
  const routes: Route[] = [{ name: "home" }, { name: "dashboard", runDir: "/r" }, { name: "transcripts", runDir: "/r", step: 4 }, { name: "evals" }];
  for (const route of routes) assert.equal(REGISTRY.entry(route)?.name, route.name);
  const panes = REGISTRY.screens.filter((s) => s.paneKey !== undefined).map((s) => s.name);
  assert.deepEqual(panes, ["dashboard", "transcripts", "timing", "checkpoints"]);
  for (const name of panes) assert.deepEqual(REGISTRY.paneRoute(`pane:${name}`, "/r"), { name, runDir: "/r" });
});
