// Run control by signals (docs/architecture.md#the-run-directory: SIGUSR1 = checkpoint now, SIGINT = save and stop,
// SIGTERM/SIGKILL escalate). Loops poll the flags at step boundaries; front ends send signals.
import { UsageError } from "../config/errors.ts";
import { isPidAlive, runState } from "./liveness.ts";

export interface RunControl {
  /** SIGUSR1 arrived and no checkpoint has been taken for it yet. */
  readonly checkpointRequested: boolean;
  /** SIGINT arrived: save a checkpoint and stop at the next step boundary. */
  readonly stopRequested: boolean;
  /** Returns true (once) if a checkpoint was requested, clearing the request. */
  consumeCheckpointRequest(): boolean;
  /** Removes the signal handlers. */
  dispose(): void;
}

export interface RunControlOptions {
  /** Called before exiting at once (second SIGINT, or SIGTERM), e.g. to mark run.json stopped. */
  onForceExit?: (signal: NodeJS.Signals) => void;
  /** Where to report that a signal was received. Default: stderr. */
  log?: (message: string) => void;
}

export function installRunControl(options: RunControlOptions = {}): RunControl {
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  let checkpointRequested = false;
  let stopRequested = false;
  const forceExit = (signal: NodeJS.Signals, code: number): void => {
    options.onForceExit?.(signal);
    process.exit(code);
  };
  const onUsr1 = (): void => {
    checkpointRequested = true;
    log("SIGUSR1: a checkpoint will be saved at the next step boundary");
  };
  const onInt = (): void => {
    if (stopRequested) {
      log("second SIGINT: exiting now");
      forceExit("SIGINT", 130);
      return;
    }
    stopRequested = true;
    log("SIGINT: saving and stopping at the next step boundary (send SIGINT again to exit now)");
  };
  const onTerm = (): void => {
    log("SIGTERM: exiting now");
    forceExit("SIGTERM", 143);
  };
  process.on("SIGUSR1", onUsr1);
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return {
    get checkpointRequested() {
      return checkpointRequested;
    },
    get stopRequested() {
      return stopRequested;
    },
    consumeCheckpointRequest() {
      const was = checkpointRequested;
      checkpointRequested = false;
      return was;
    },
    dispose() {
      process.off("SIGUSR1", onUsr1);
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

export type RunSignalAction = "checkpoint" | "stop" | "terminate" | "kill";

export const SIGNAL_FOR_ACTION: Record<RunSignalAction, NodeJS.Signals> = {
  checkpoint: "SIGUSR1",
  stop: "SIGINT",
  terminate: "SIGTERM",
  kill: "SIGKILL",
};

/**
 * Sends the signal for `action` to the pid recorded in `logDir`/run.json. Throws UsageError when
 * the directory has no live run (never signals a pid that no longer belongs to the run).
 */
export function signalRun(logDir: string, action: RunSignalAction): { pid: number; signal: NodeJS.Signals } {
  const state = runState(logDir);
  if (!state.manifest) throw new UsageError(`no run.json in ${logDir}: not a run started by cookbook`);
  const pid = state.manifest.pid;
  if (!state.live && !(state.status === "stale" && isPidAlive(pid))) {
    throw new UsageError(`the run in ${logDir} is not running (status: ${state.status})`);
  }
  const signal = SIGNAL_FOR_ACTION[action];
  process.kill(pid, signal);
  return { pid, signal };
}
