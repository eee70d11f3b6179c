// `cookbook` (bare) and `cookbook watch <dir>` on a terminal: the Ink UI in the alternate screen.
// Without a terminal it does not start (the command prints the runs table instead). Quitting never
// stops background runs.
import { render } from "ink";
import { recipes } from "../../recipes/registry.ts";
import { experimentsRoots } from "../experiments/batches.ts";
import { defaultLogRoot, expandLogPath } from "../runs/index.ts";
import { chooseEngine } from "../service.ts";
import { App } from "./App.tsx";
import { AppContainer } from "./AppContainer.tsx";
import { ProcessManager } from "./services/processManager.ts";
import type { Route } from "./state/routes.ts";
import type { Services } from "./state/contexts.tsx";

export interface StartTuiOptions {
  /** Where runs are listed and launched (default: $COOKBOOK_LOG_ROOT or /tmp/tinker-examples). */
  logRoot?: string;
  /** Where the Batch screen looks for batches (default: ./experiments and $COOKBOOK_EXPERIMENTS_ROOT). */
  experimentRoots?: readonly string[];
  /** Open this run's dashboard directly (`cookbook watch <dir>`). */
  runDir?: string;
  pollMs?: number;
}

export function engineLabel(env: NodeJS.ProcessEnv = process.env): string {
  try {
    const choice = chooseEngine({ env });
    return choice.kind === "embedded" ? "embedded" : `remote ${choice.baseUrl ?? "(hosted Tinker)"}`;
  } catch (err) {
    return `invalid engine settings: ${(err as Error).message}`;
  }
}

export function makeServices(options: StartTuiOptions = {}, writeRaw: (t: string) => void = () => {}): Services {
  return {
    logRoot: expandLogPath(options.logRoot ?? defaultLogRoot()),
    experimentRoots: options.experimentRoots ?? experimentsRoots(),
    recipes,
    processes: new ProcessManager(),
    engineLabel: engineLabel(),
    pollMs: options.pollMs ?? 100,
    writeRaw,
  };
}

const ALT_ON = "\x1b[?1049h\x1b[H";
const ALT_OFF = "\x1b[?1049l";

/** Opens the UI and resolves when it closes; false (nothing shown) without a terminal. */
export async function startTui(options: StartTuiOptions = {}): Promise<boolean> {
  if (!process.stdout.isTTY || !process.stdin.isTTY) return false;
  const services = makeServices(options, (t) => process.stdout.write(t));
  const first: Route | undefined = options.runDir ? { name: "dashboard", runDir: expandLogPath(options.runDir) } : undefined;
  // A closed terminal (ssh drop, tmux kill) must not turn into a crash report.
  process.stdout.on("error", () => {});
  process.stdout.write(ALT_ON);
  const restore = (): void => {
    process.stdout.write(ALT_OFF);
  };
  process.once("exit", restore);
  try {
    const app = render(
      <AppContainer services={services} first={first}>
        <App />
      </AppContainer>,
      { exitOnCtrlC: false, patchConsole: true, maxFps: 10 },
    );
    await app.waitUntilExit();
  } finally {
    services.processes.dispose();
    process.off("exit", restore);
    restore();
  }
  return true;
}
