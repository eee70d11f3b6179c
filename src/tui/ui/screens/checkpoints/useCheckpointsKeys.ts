// The checkpoints screen's keys and side effects: the chat's session and sampling, deleting a
// checkpoint, starting a run from one, copying its path, signals to the run. State changes go
// to the reducer; everything else to services.
import { type Dispatch, useEffect, useRef } from "react";
import type { CheckpointRecord } from "../../../../runs/index.ts";
import type { Message } from "../../../../renderers/index.ts";
import { checkpointPath, deleteCheckpoint, startFromCheckpoint } from "../../../services/checkpointActions.ts";
import { osc52 } from "../../../services/clipboard.ts";
import type { ChatSession } from "../../../services/sampler.ts";
import type { CheckpointsCommand } from "./checkpointsKeys.ts";
import { type ScreenKeyHandler, useServices, useUIActions } from "../../../state/contexts.tsx";
import { type CheckpointsAction, type CheckpointsState, capturing, confirmReady, pendingMessage } from "./checkpointsState.ts";

const MOVES = ["up", "down", "top", "bottom", "pageUp", "pageDown"];

export interface CheckpointsKeysInput {
  runDir: string;
  state: CheckpointsState;
  dispatch: Dispatch<CheckpointsAction>;
  list: readonly CheckpointRecord[];
  config: Record<string, unknown> | undefined;
}

export function useCheckpointsKeys({ runDir, state: s, dispatch, list, config }: CheckpointsKeysInput): ScreenKeyHandler<CheckpointsCommand> {
  const services = useServices();
  const actions = useUIActions();
  const selected = list[Math.min(s.cursor, list.length - 1)];
  const chatCkpt = s.chat ? list.find((c) => c.name === s.chat!.ckptName) : undefined;
  // The open chat's engine connection: a service handle, not screen state.
  const session = useRef<ChatSession | undefined>(undefined);

  const closeSession = (): void => {
    void session.current?.close().catch(() => {});
    session.current = undefined;
  };
  useEffect(() => closeSession, []);
  useEffect(() => {
    if (!s.chat) closeSession();
  }, [s.chat === undefined]);

  const send = (text: string): void => {
    if (!chatCkpt || !s.chat) return;
    const history: Message[] = [...s.chat.history, { role: "user", content: text }];
    dispatch({ type: "sent" });
    void (async () => {
      try {
        // Loaded on demand: tokenizers and the engine are heavy and most sessions never chat.
        session.current ??= await (await import("../../../services/sampler.ts")).openChat(chatCkpt, config);
        dispatch({ type: "reply", text: await session.current.send(history, s.options) });
      } catch (err) {
        dispatch({ type: "chatFailed", error: (err as Error).message });
      }
    })();
  };

  const confirmDelete = (): void => {
    const ckpt = list.find((c) => c.name === s.confirm?.name);
    if (!ckpt) return dispatch({ type: "confirmError", error: "the checkpoint is no longer listed" });
    deleteCheckpoint(runDir, ckpt, config).then(
      () => {
        actions.info(`deleted checkpoint ${ckpt.name}`);
        dispatch({ type: "closeConfirm" });
      },
      (err: Error) => dispatch({ type: "confirmError", error: `delete failed: ${err.message}` }),
    );
  };

  const chatCommand = (cmd: CheckpointsCommand): boolean => {
    if (cmd === "chatFocus") dispatch({ type: "toggleFocus" });
    else if (MOVES.includes(cmd)) dispatch({ type: "move", cmd, count: 0 });
    else if (cmd === "chatOptionUp" || cmd === "chatOptionDown") dispatch({ type: "stepOption", direction: cmd === "chatOptionUp" ? 1 : -1 });
    else if (cmd === "chat") dispatch({ type: "editOption" });
    else if (cmd === "back") dispatch({ type: "closeChat" });
    // Other commands wait until the chat is closed; quit and help still work.
    else return cmd !== "quit" && cmd !== "help";
    return true;
  };

  const command = (cmd: CheckpointsCommand): boolean => {
    if (MOVES.includes(cmd)) dispatch({ type: "move", cmd, count: list.length });
    else if (cmd === "checkpointNow") {
      services.processes.checkpoint(runDir);
      actions.info("checkpoint requested (SIGUSR1): it is saved at the next step boundary");
    } else if (cmd === "stopRun") {
      services.processes.stop(runDir);
      actions.info("stop requested (SIGINT): the run saves and stops; SIGTERM/SIGKILL follow if it lingers");
    } else if (cmd === "copyPath") {
      const path = selected ? checkpointPath(selected) : undefined;
      if (!path) actions.error("no path to copy");
      else {
        services.writeRaw(osc52(path));
        actions.info(`copied ${path}`);
      }
    } else if (cmd === "chat") {
      if (selected) dispatch({ type: "openChat", ckptName: selected.name });
    } else if (cmd === "deleteCheckpoint") {
      if (selected) dispatch({ type: "openConfirm", name: selected.name });
    } else if (cmd === "resumeFromCheckpoint") {
      if (selected) {
        startFromCheckpoint(services.processes, services.recipes, runDir, selected).then(
          (res) => {
            actions.info(`started ${res.logDir} from ${selected.name} (pid ${res.pid})`);
            actions.push({ name: "dashboard", runDir: res.logDir });
          },
          (err: Error) => actions.error(err.message),
        );
      }
    } else return false;
    return true;
  };

  return {
    capturing: capturing(s),
    onRaw: (input, key) => {
      if (key.return && s.confirm) {
        if (confirmReady(s)) confirmDelete();
      } else if (key.return && pendingMessage(s) !== undefined) send(pendingMessage(s)!);
      else dispatch({ type: "type", input, key });
    },
    onCommand: (cmd) => (s.chat ? chatCommand(cmd) : command(cmd)),
  };
}
