// Checkpoints of a run: the records of checkpoints.jsonl; save one now (SIGUSR1), start a new
// run from one, chat with one through the Tinker API, copy its tinker:// path, delete one.
import { type ReactNode, useRef, useState } from "react";
import { Box, Text } from "ink";
import { listConfigFields, loadRecipe } from "../../../config/index.ts";
import { type CheckpointRecord, readManifest, removeCheckpointRecord } from "../../../runs/index.ts";
import type { Message } from "../../../renderers/index.ts";
import { fit } from "../../core/format.ts";
import { roleColor, theme } from "../../core/palette.ts";
import { osc52 } from "../../services/clipboard.ts";
import { runFromCheckpoint } from "../../services/runActions.ts";
import type { ChatSession } from "../../services/sampler.ts";
import { useServices, useUIActions } from "../../state/contexts.tsx";
import { TypedConfirm } from "../components/TypedConfirm.tsx";
import { editText, moveCursor, windowStart } from "../hooks/textEdit.ts";
import { useRun } from "../hooks/useRun.ts";
import { useScreenKeys } from "../hooks/useScreenKeys.ts";
import { wrapText } from "../../core/transcripts.ts";

interface Chat {
  ckpt: CheckpointRecord;
  history: Message[];
  input: string;
  status: string;
  session?: ChatSession;
}

export function checkpointPath(c: CheckpointRecord): string | undefined {
  return typeof c.state_path === "string" ? c.state_path : typeof c.sampler_path === "string" ? c.sampler_path : undefined;
}

export function Checkpoints({ runDir, rows, width }: { runDir: string; rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const snap = useRun(runDir);
  const [cursor, setCursor] = useState(0);
  const [confirm, setConfirm] = useState<{ ckpt: CheckpointRecord; typed: string; error?: string } | undefined>();
  const [chat, setChat] = useState<Chat | undefined>();
  const chatRef = useRef<Chat | undefined>(undefined);
  chatRef.current = chat;
  const list = snap.checkpoints;
  const selected = list[Math.min(cursor, list.length - 1)];

  const closeChat = (): void => {
    void chatRef.current?.session?.close().catch(() => {});
    setChat(undefined);
  };

  const send = (c: Chat): void => {
    const history: Message[] = [...c.history, { role: "user", content: c.input }];
    const next: Chat = { ...c, history, input: "", status: "sampling…" };
    setChat(next);
    void (async () => {
      try {
        // Loaded on demand: tokenizers and the engine are heavy and most sessions never chat.
        const session = c.session ?? (await (await import("../../services/sampler.ts")).openChat(c.ckpt, snap.config));
        const reply = await session.send(history);
        setChat((cur) => (cur ? { ...cur, session, history: [...history, { role: "assistant", content: reply }], status: "" } : cur));
      } catch (err) {
        setChat((cur) => (cur ? { ...cur, status: `error: ${(err as Error).message}` } : cur));
      }
    })();
  };

  const deleteCheckpoint = async (ckpt: CheckpointRecord): Promise<void> => {
    const paths = [ckpt.state_path, ckpt.sampler_path].filter((p): p is string => typeof p === "string");
    const { createServiceClient } = await import("../../../service.ts");
    const service = await createServiceClient(typeof snap.config?.base_url === "string" ? { baseUrl: snap.config.base_url } : {});
    try {
      const rest = service.createRestClient();
      for (const p of paths) await rest.deleteCheckpointFromTinkerPath(p);
    } finally {
      await service.close().catch(() => {});
    }
    removeCheckpointRecord(runDir, ckpt.name, typeof ckpt.state_path === "string" ? ckpt.state_path : undefined);
  };

  useScreenKeys({
    capturing: confirm !== undefined || chat !== undefined,
    onRaw: (input, key) => {
      if (confirm) {
        if (key.escape) setConfirm(undefined);
        else if (key.return && confirm.typed === confirm.ckpt.name) {
          const c = confirm;
          deleteCheckpoint(c.ckpt).then(
            () => {
              actions.info(`deleted checkpoint ${c.ckpt.name}`);
              setConfirm(undefined);
            },
            (err: Error) => setConfirm({ ...c, error: `delete failed: ${err.message}` }),
          );
        } else setConfirm({ ...confirm, typed: editText(confirm.typed, input, key), error: undefined });
        return;
      }
      if (chat) {
        if (key.escape) closeChat();
        else if (key.return) {
          if (chat.input.trim() !== "" && chat.status !== "sampling…") send(chat);
        } else setChat({ ...chat, input: editText(chat.input, input, key) });
      }
    },
    onCommand: (cmd) => {
      const moved = moveCursor(cmd, cursor, list.length);
      if (moved !== undefined) {
        setCursor(moved);
        return true;
      }
      try {
        switch (cmd) {
          case "checkpointNow":
            services.processes.checkpoint(runDir);
            actions.info("checkpoint requested (SIGUSR1): it is saved at the next step boundary");
            return true;
          case "stopRun":
            services.processes.stop(runDir);
            actions.info("stop requested (SIGINT): the run saves and stops; SIGTERM/SIGKILL follow if it lingers");
            return true;
          case "copyPath": {
            const path = selected ? checkpointPath(selected) : undefined;
            if (!path) actions.error("no path to copy");
            else {
              services.writeRaw(osc52(path));
              actions.info(`copied ${path}`);
            }
            return true;
          }
          case "chat":
            if (selected) setChat({ ckpt: selected, history: [], input: "", status: "type a message, enter sends, esc closes" });
            return true;
          case "deleteCheckpoint":
            if (selected) setConfirm({ ckpt: selected, typed: "" });
            return true;
          case "resumeFromCheckpoint":
            if (selected) {
              const ckpt = selected;
              void (async () => {
                try {
                  const m = readManifest(runDir);
                  const recipe = m ? await loadRecipe(services.recipes, m.recipe) : undefined;
                  if (recipe && !listConfigFields(recipe.configSchema).some((f) => f.path === "load_checkpoint_path")) {
                    throw new Error(`recipe ${recipe.name} has no load_checkpoint_path; use r on the dashboard to resume the run itself`);
                  }
                  const res = runFromCheckpoint(services.processes, runDir, ckpt);
                  actions.info(`started ${res.logDir} from ${ckpt.name} (pid ${res.pid})`);
                  actions.push({ name: "dashboard", runDir: res.logDir });
                } catch (err) {
                  actions.error((err as Error).message);
                }
              })();
            }
            return true;
          default:
            return false;
        }
      } catch (err) {
        actions.error((err as Error).message);
        return true;
      }
    },
  });

  const chatRows = chat ? Math.max(6, Math.floor(rows / 2)) : 0;
  const listRows = Math.max(2, rows - 3 - chatRows - (confirm ? 5 : 0));
  const start = windowStart(cursor, list.length, listRows);
  const pathW = Math.max(10, width - 34);
  const chatLines = chat
    ? chat.history.flatMap((m) =>
        wrapText(`${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`, width - 2).map((t) => ({ t, role: m.role })),
      )
    : [];
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent} wrap="truncate">
        {`Checkpoints  ${list.length} in checkpoints.jsonl  ${snap.state.live ? "· run is live (C saves now)" : `· run ${snap.state.status}`}`}
      </Text>
      <Text color={theme.muted} wrap="truncate">
        {fit(`${"name".padEnd(8)} ${"batch".padEnd(7)} ${"epoch".padEnd(6)} ${"kind".padEnd(8)} path`, width)}
      </Text>
      {list.length === 0 ? <Text color={theme.muted}>no checkpoints yet</Text> : null}
      {list.slice(start, start + listRows).map((c, i) => {
        const kind = c.final ? "final" : c.rolling ? "rolling" : "periodic";
        return (
          <Text key={`${c.name}-${start + i}`} inverse={start + i === cursor} wrap="truncate">
            {`${fit(c.name, 8)} ${fit(c.batch === undefined ? "–" : String(c.batch), 7)} ${fit(c.epoch === undefined ? "–" : String(c.epoch), 6)} ${fit(kind, 8)} ${fit(checkpointPath(c) ?? "–", pathW)}`}
          </Text>
        );
      })}
      {confirm ? <TypedConfirm title={`Delete checkpoint ${confirm.ckpt.name} (${checkpointPath(confirm.ckpt) ?? "no path"})?`} word={confirm.ckpt.name} typed={confirm.typed} error={confirm.error} /> : null}
      {chat ? (
        <Box flexDirection="column" height={chatRows} borderStyle="round" borderColor={theme.accent}>
          <Text color={theme.muted} wrap="truncate">{`chat with ${chat.ckpt.name} · ${chat.status}`}</Text>
          {chatLines.slice(-(chatRows - 4)).map((l, i) => (
            <Text key={i} color={roleColor(l.role)} wrap="truncate">
              {l.t}
            </Text>
          ))}
          <Text wrap="truncate">{`> ${chat.input}▏`}</Text>
        </Box>
      ) : null}
    </Box>
  );
}
