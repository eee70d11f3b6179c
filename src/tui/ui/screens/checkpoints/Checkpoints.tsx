// Checkpoints of a run: the records of checkpoints.jsonl; save one now (SIGUSR1), start a new
// run from one, chat with one through the Tinker API (with sampling options), copy its tinker://
// path, delete one. Deleting, chatting and launching are services; this screen holds state.
import { type ReactNode, useEffect, useReducer, useRef } from "react";
import { Box, Text } from "ink";
import type { Message } from "../../../../renderers/index.ts";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import { checkpointPath, deleteCheckpoint, startFromCheckpoint } from "../../../services/checkpointActions.ts";
import { osc52 } from "../../../services/clipboard.ts";
import type { ChatSession } from "../../../services/sampler.ts";
import { useServices, useUIActions } from "../../../state/contexts.tsx";
import { TypedConfirm } from "../../components/TypedConfirm.tsx";
import { useRun } from "../../hooks/useRun.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { ChatPane } from "./ChatPane.tsx";
import { capturing, checkpointsReducer, confirmReady, initialCheckpoints, pendingMessage } from "./checkpointsState.ts";

export type CheckpointsRoute = { name: "checkpoints"; runDir: string };

const MOVES = ["up", "down", "top", "bottom", "pageUp", "pageDown"];

export function Checkpoints({ route, rows, width }: { route: CheckpointsRoute; rows: number; width: number }): ReactNode {
  const { runDir } = route;
  const services = useServices();
  const actions = useUIActions();
  const snap = useRun(runDir);
  const [s, dispatch] = useReducer(checkpointsReducer, initialCheckpoints);
  // The open chat's engine connection: a service handle, not screen state.
  const session = useRef<ChatSession | undefined>(undefined);
  const list = snap.checkpoints;
  const selected = list[Math.min(s.cursor, list.length - 1)];
  const chatCkpt = s.chat ? list.find((c) => c.name === s.chat!.ckptName) : undefined;

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
        session.current ??= await (await import("../../../services/sampler.ts")).openChat(chatCkpt, snap.config);
        dispatch({ type: "reply", text: await session.current.send(history, s.options) });
      } catch (err) {
        dispatch({ type: "chatFailed", error: (err as Error).message });
      }
    })();
  };

  const confirmDelete = (): void => {
    const ckpt = list.find((c) => c.name === s.confirm?.name);
    if (!ckpt) return dispatch({ type: "confirmError", error: "the checkpoint is no longer listed" });
    deleteCheckpoint(runDir, ckpt, snap.config).then(
      () => {
        actions.info(`deleted checkpoint ${ckpt.name}`);
        dispatch({ type: "closeConfirm" });
      },
      (err: Error) => dispatch({ type: "confirmError", error: `delete failed: ${err.message}` }),
    );
  };

  const chatCommand = (cmd: string): boolean => {
    if (cmd === "chatFocus") dispatch({ type: "toggleFocus" });
    else if (MOVES.includes(cmd)) dispatch({ type: "move", cmd, count: 0 });
    else if (cmd === "chatOptionUp" || cmd === "chatOptionDown") dispatch({ type: "stepOption", direction: cmd === "chatOptionUp" ? 1 : -1 });
    else if (cmd === "chat") dispatch({ type: "editOption" });
    else if (cmd === "back") dispatch({ type: "closeChat" });
    // Other commands wait until the chat is closed; quit and help still work.
    else return cmd !== "quit" && cmd !== "help";
    return true;
  };

  const command = (cmd: string): boolean => {
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

  useScreenKeys({
    capturing: capturing(s),
    onRaw: (input, key) => {
      if (key.return && s.confirm) {
        if (confirmReady(s)) confirmDelete();
      } else if (key.return && pendingMessage(s) !== undefined) send(pendingMessage(s)!);
      else dispatch({ type: "type", input, key });
    },
    onCommand: (cmd) => (s.chat ? chatCommand(cmd) : command(cmd)),
  });

  const chatRows = s.chat ? Math.max(7, Math.floor(rows / 2)) : 0;
  const listRows = Math.max(2, rows - 3 - chatRows - (s.confirm ? 5 : 0));
  const start = windowStart(s.cursor, list.length, listRows);
  const pathW = Math.max(10, width - 34);
  const confirmCkpt = s.confirm ? list.find((c) => c.name === s.confirm!.name) : undefined;
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent} wrap="truncate">
        {`Checkpoints  ${list.length} in checkpoints.jsonl  ${snap.state.live ? "· run is live (C saves now)" : `· run ${snap.state.status}`}`}
      </Text>
      <Text color={theme.muted} wrap="truncate">
        {fit(`${"name".padEnd(8)} ${"batch".padEnd(7)} ${"epoch".padEnd(6)} ${"kind".padEnd(8)} path`, width)}
      </Text>
      {list.length === 0 ? <Text color={theme.muted}>no checkpoints yet</Text> : null}
      {list.slice(start, start + listRows).map((c, i) => (
        <Text key={`${c.name}-${start + i}`} inverse={start + i === s.cursor} wrap="truncate">
          {`${fit(c.name, 8)} ${fit(c.batch === undefined ? "–" : String(c.batch), 7)} ${fit(c.epoch === undefined ? "–" : String(c.epoch), 6)} ${fit(c.final ? "final" : c.rolling ? "rolling" : "periodic", 8)} ${fit(checkpointPath(c) ?? "–", pathW)}`}
        </Text>
      ))}
      {s.confirm ? (
        <TypedConfirm title={`Delete checkpoint ${s.confirm.name} (${(confirmCkpt && checkpointPath(confirmCkpt)) ?? "no path"})?`} word={s.confirm.name} typed={s.confirm.typed} error={s.confirm.error} />
      ) : null}
      {s.chat ? <ChatPane chat={s.chat} options={s.options} rows={chatRows} width={width} /> : null}
    </Box>
  );
}
