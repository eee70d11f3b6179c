// Renders the whole app (container + screens) at a chosen size with ink-testing-library, plus
// waiting helpers: input and React scheduling are asynchronous.
import { join } from "node:path";
import { render } from "ink-testing-library";
import { recipes } from "../../recipes/registry.ts";
import { App } from "../../src/tui/App.tsx";
import { AppContainer } from "../../src/tui/AppContainer.tsx";
import { stripAnsi } from "../../src/tui/core/format.ts";
import { ProcessManager } from "../../src/tui/services/processManager.ts";
import type { Route } from "../../src/tui/state/routes.ts";
import type { Services } from "../../src/tui/state/contexts.tsx";
import type { ScreenRegistry } from "../../src/tui/ui/screens/registry.ts";

export interface Harness {
  frame(): string;
  press(keys: string): Promise<void>;
  waitFor(pred: (frame: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  written: string[];
  unmount(): void;
}

export interface RenderOptions {
  first?: Route;
  columns?: number;
  rows?: number;
  registry?: ScreenRegistry;
  /** Batch screen roots (default: <logRoot>/experiments). */
  experimentRoots?: readonly string[];
  /** A process manager with a fake spawner, to check what a launch would start. */
  processes?: ProcessManager;
}

export function renderApp(logRoot: string, options: RenderOptions = {}): Harness {
  const written: string[] = [];
  const services: Services = {
    logRoot,
    experimentRoots: options.experimentRoots ?? [join(logRoot, "experiments")],
    recipes,
    processes: options.processes ?? new ProcessManager({ termAfterMs: 200, killAfterMs: 200 }),
    engineLabel: "embedded",
    pollMs: 50,
    writeRaw: (t) => written.push(t),
  };
  const size = { columns: options.columns ?? 100, rows: options.rows ?? 30 };
  const inst = render(
    <AppContainer services={services} first={options.first} size={size} registry={options.registry}>
      <App />
    </AppContainer>,
  );
  const frame = (): string => stripAnsi(inst.lastFrame() ?? "");
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  return {
    frame,
    written,
    press: async (keys) => {
      inst.stdin.write(keys);
      await sleep(60);
    },
    waitFor: async (pred, what, timeoutMs = 15_000) => {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        const f = frame();
        if (pred(f)) return f;
        await sleep(25);
      }
      throw new Error(`timed out waiting for ${what}; last frame:\n${frame()}`);
    },
    unmount: () => {
      inst.unmount();
      services.processes.dispose();
    },
  };
}
