// Checkpoints of a run: the records of checkpoints.jsonl; save one now (SIGUSR1), start a new
// run from one, chat with one through the Tinker API (with sampling options), copy its tinker://
// path, delete one. Deleting, chatting and launching are services; this screen holds state.
import { type ReactNode, useReducer } from "react";
import { Box, Text } from "ink";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import { checkpointPath } from "../../../services/checkpointActions.ts";
import { TypedConfirm } from "../../components/TypedConfirm.tsx";
import { useRun } from "../../hooks/useRun.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { ChatPane } from "./ChatPane.tsx";
import { checkpointsReducer, initialCheckpoints } from "./checkpointsState.ts";
import { useCheckpointsKeys } from "./useCheckpointsKeys.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type CheckpointsRoute = RouteOf<"checkpoints">;

export function Checkpoints({ route, rows, width }: { route: CheckpointsRoute; rows: number; width: number }): ReactNode {
  const { runDir } = route;
  const snap = useRun(runDir);
  const [s, dispatch] = useReducer(checkpointsReducer, initialCheckpoints);
  const list = snap.checkpoints;
  useScreenKeys(useCheckpointsKeys({ runDir, state: s, dispatch, list, config: snap.config }));

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
        <TypedConfirm
          title={`Delete checkpoint ${s.confirm.name} (${(confirmCkpt && checkpointPath(confirmCkpt)) ?? "no path"})?`}
          word={s.confirm.name}
          typed={s.confirm.typed}
          error={s.confirm.error}
        />
      ) : null}
      {s.chat ? <ChatPane chat={s.chat} options={s.options} rows={chatRows} width={width} /> : null}
    </Box>
  );
}
