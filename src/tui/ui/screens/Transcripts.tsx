// Transcripts of a run: iterations (h/l), trajectories sorted by reward and filtered by reward
// range or tag, the selected one in full (prompt/response with roles coloured, rewards, advantage,
// metrics), a group view side by side, and the iteration's reward histogram. Supervised runs show
// their logged training examples coloured by loss weight instead.
import { type ReactNode, useMemo, useState } from "react";
import { Box, Text } from "ink";
import {
  type TranscriptRecord,
  iterationForStep,
  listIterations,
  readTrainingExamples,
  readTranscripts,
  withGroupAdvantages,
} from "../../../runs/index.ts";
import { histogram, renderHistogram } from "../../core/histogram.ts";
import { fit, fmtNum } from "../../core/format.ts";
import { roleColor, theme } from "../../core/palette.ts";
import { SORTS, type RewardSort, meanReward, parseTranscriptFilter, selectTranscripts, splitRoles, wrapText } from "../../core/transcripts.ts";
import { useUIActions } from "../../state/contexts.tsx";
import { editText, moveCursor, windowStart } from "../hooks/textEdit.ts";
import { useRun } from "../hooks/useRun.ts";
import { useScreenKeys } from "../hooks/useScreenKeys.ts";

type View = "list" | "group" | "histogram";

interface Line {
  text: string;
  color?: string;
  bold?: boolean;
}

function detailLines(r: TranscriptRecord, width: number): Line[] {
  const lines: Line[] = [];
  const head = `group ${r.group_idx} traj ${r.traj_idx}  reward ${fmtNum(r.total_reward)} (final ${fmtNum(r.final_reward)})  advantage ${fmtNum(r.advantage)}`;
  lines.push({ text: head, bold: true });
  const meta = [
    r.tags.length ? `tags ${r.tags.join(",")}` : "",
    r.stop_reason ? `stop ${r.stop_reason}` : "",
    r.sampling_client_step !== null ? `sampler step ${r.sampling_client_step}` : "",
    `turns ${r.steps.length}`,
  ].filter(Boolean);
  lines.push({ text: meta.join("  "), color: theme.muted });
  const metrics = Object.entries(r.trajectory_metrics).map(([k, v]) => `${k}=${fmtNum(v)}`);
  if (metrics.length) for (const l of wrapText(`metrics: ${metrics.join("  ")}`, width)) lines.push({ text: l, color: theme.muted });
  for (const s of r.steps) {
    const sm = Object.entries(s.metrics).map(([k, v]) => `${k}=${fmtNum(v)}`);
    lines.push({ text: `turn ${s.step_idx}: ob ${s.ob_len ?? "?"} ac ${s.ac_len ?? "?"} reward ${fmtNum(s.reward)}${sm.length ? "  " + sm.join(" ") : ""}`, color: theme.muted });
  }
  const blocks = [...splitRoles(r.prompt, "user"), ...splitRoles(r.response, "assistant").map((b) => ({ ...b, response: true }))];
  if (blocks.length === 0) lines.push({ text: "(no prompt/response text in this record)", color: theme.muted });
  for (const b of blocks) {
    lines.push({ text: `${b.role}:`, color: roleColor(b.role), bold: true });
    for (const l of wrapText(b.text, width - 2)) lines.push({ text: `  ${l}`, color: roleColor(b.role) });
  }
  return lines;
}

export function Transcripts({ runDir, step, rows, width }: { runDir: string; step?: number; rows: number; width: number }): ReactNode {
  const actions = useUIActions();
  const snap = useRun(runDir);
  const iterations = useMemo(() => listIterations(runDir), [runDir, snap.version]);
  const [iterIdx, setIterIdx] = useState<number | undefined>(() => {
    if (step === undefined) return undefined;
    const it = iterationForStep(iterations, step);
    return it ? iterations.indexOf(it) : undefined;
  });
  const current = iterations[Math.min(iterIdx ?? iterations.length - 1, iterations.length - 1)];
  const [sort, setSort] = useState<RewardSort>("desc");
  const [filterText, setFilterText] = useState("");
  const [typing, setTyping] = useState(false);
  const [cursor, setCursor] = useState(0);
  const [scroll, setScroll] = useState(0);
  const [view, setView] = useState<View>("list");

  const base = current?.summaries[0] ?? "train";
  const records = useMemo(() => (current ? withGroupAdvantages(readTranscripts(runDir, current.iteration, base)) : []), [runDir, current?.iteration, base, current?.summaries.length]);
  const shown = useMemo(() => selectTranscripts(records, sort, parseTranscriptFilter(filterText)), [records, sort, filterText]);
  const selected = shown[Math.min(cursor, shown.length - 1)];
  const examples = useMemo(() => (iterations.length === 0 ? readTrainingExamples(runDir) : []), [runDir, iterations.length, snap.version]);

  useScreenKeys({
    capturing: typing,
    onRaw: (input, key) => {
      if (key.escape || key.return) setTyping(false);
      else {
        setFilterText(editText(filterText, input, key));
        setCursor(0);
      }
    },
    onCommand: (cmd) => {
      if (cmd === "pageDown" || cmd === "pageUp") {
        setScroll(Math.max(0, scroll + (cmd === "pageDown" ? 1 : -1) * Math.max(1, rows - 6)));
        return true;
      }
      const count = iterations.length > 0 ? shown.length : examples.length;
      const moved = moveCursor(cmd, cursor, count);
      if (moved !== undefined) {
        setCursor(moved);
        setScroll(0);
        return true;
      }
      const here = iterations.indexOf(current!);
      switch (cmd) {
        case "prevIteration":
          if (here > 0) setIterIdx(here - 1);
          setCursor(0);
          return true;
        case "nextIteration":
          if (here >= 0 && here < iterations.length - 1) setIterIdx(here + 1);
          setCursor(0);
          return true;
        case "sortReward":
          setSort(SORTS[(SORTS.indexOf(sort) + 1) % SORTS.length]);
          return true;
        case "filter":
          setTyping(true);
          return true;
        case "groupView":
          setView(view === "group" ? "list" : "group");
          return true;
        case "histogram":
          setView(view === "histogram" ? "list" : "histogram");
          return true;
        case "back":
          if (view !== "list") {
            setView("list");
            return true;
          }
          if (filterText) {
            setFilterText("");
            return true;
          }
          return false;
        case "open":
          actions.info(selected ? `group ${selected.group_idx} traj ${selected.traj_idx}: PgUp/PgDn scroll the detail` : "nothing selected");
          return true;
        default:
          return false;
      }
    },
  });

  if (iterations.length === 0) {
    if (examples.length > 0) return <ExamplesView examples={examples} cursor={cursor} rows={rows} width={width} />;
    return (
      <Box flexDirection="column">
        <Text bold color={theme.accent}>{`Transcripts — ${runDir}`}</Text>
        <Text color={theme.muted}>no iteration_NNNNNN/ transcripts and no train_examples.jsonl in this run (yet)</Text>
      </Box>
    );
  }

  const mean = meanReward(records);
  const header = `Transcripts  iteration ${current?.iteration} (${iterations.indexOf(current!) + 1}/${iterations.length})  ${base}  ${shown.length}/${records.length} trajectories  mean reward ${fmtNum(mean)}  sort ${sort}${filterText || typing ? `  filter: ${filterText}${typing ? "▏" : ""}` : ""}`;
  const bodyRows = rows - 2;

  let body: ReactNode;
  if (view === "histogram") {
    const rewards = records.map((r) => r.total_reward);
    // No more bins than distinct rewards (binary rewards get two bars, not twelve).
    const distinct = new Set(rewards.filter((v) => Number.isFinite(v))).size;
    const h = histogram(rewards, Math.max(1, Math.min(12, distinct, bodyRows - 2)));
    body = (
      <Box flexDirection="column">
        <Text bold>{`reward histogram (${records.length} trajectories)`}</Text>
        {renderHistogram(h, Math.max(10, width - 30), fmtNum).map((l, i) => (
          <Text key={i} color={theme.ok}>
            {l}
          </Text>
        ))}
      </Box>
    );
  } else if (view === "group" && selected) {
    const members = records.filter((r) => r.group_idx === selected.group_idx).sort((a, b) => a.traj_idx - b.traj_idx);
    const colW = Math.max(16, Math.floor(width / Math.max(1, Math.min(members.length, Math.floor(width / 16)))));
    const visible = members.slice(0, Math.floor(width / colW));
    body = (
      <Box flexDirection="column">
        <Text bold>{`group ${selected.group_idx}: ${members.length} trajectories${visible.length < members.length ? ` (${visible.length} fit)` : ""}`}</Text>
        <Box flexDirection="row">
          {visible.map((r) => {
            const resp = wrapText(r.response ?? "(no text)", colW - 2).slice(scroll, scroll + bodyRows - 4);
            return (
              <Box key={r.traj_idx} flexDirection="column" width={colW}>
                <Text bold color={r.traj_idx === selected.traj_idx ? theme.accent : undefined} wrap="truncate">{`#${r.traj_idx} r=${fmtNum(r.total_reward)} a=${fmtNum(r.advantage)}`}</Text>
                {resp.map((l, i) => (
                  <Text key={i} color={theme.assistant} wrap="truncate">
                    {l}
                  </Text>
                ))}
              </Box>
            );
          })}
        </Box>
      </Box>
    );
  } else {
    const narrow = width < 100;
    const listW = narrow ? width : Math.min(44, Math.floor(width * 0.35));
    const listRows = narrow ? Math.max(3, Math.floor(bodyRows / 3)) : bodyRows;
    const detailW = narrow ? width : width - listW - 1;
    const detailRows = narrow ? bodyRows - listRows : bodyRows;
    const start = windowStart(cursor, shown.length, listRows);
    const detail = selected ? detailLines(selected, detailW) : [];
    const list = (
      <Box flexDirection="column" width={listW} height={listRows}>
        {shown.slice(start, start + listRows).map((r, i) => (
          <Text key={`${r.group_idx}-${r.traj_idx}`} inverse={start + i === cursor} wrap="truncate">
            {fit(`g${r.group_idx}/t${r.traj_idx}`, 9)}
            <Text color={r.total_reward > 0 ? theme.ok : r.total_reward < 0 ? theme.error : theme.warn}>{fit(fmtNum(r.total_reward), 9)}</Text>
            {fit(`a ${fmtNum(r.advantage)}`, 11)}
            <Text color={theme.muted}>{fit(r.tags.join(","), Math.max(0, listW - 29))}</Text>
          </Text>
        ))}
        {shown.length === 0 ? <Text color={theme.muted}>no trajectory matches</Text> : null}
      </Box>
    );
    const detailBox = (
      <Box flexDirection="column" width={detailW} height={detailRows}>
        {detail.slice(scroll, scroll + detailRows).map((l, i) => (
          <Text key={i} color={l.color} bold={l.bold} wrap="truncate">
            {l.text}
          </Text>
        ))}
      </Box>
    );
    body = narrow ? (
      <Box flexDirection="column">
        {list}
        {detailBox}
      </Box>
    ) : (
      <Box flexDirection="row">
        {list}
        <Text> </Text>
        {detailBox}
      </Box>
    );
  }

  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent} wrap="truncate">
        {fit(header, width)}
      </Text>
      <Box height={bodyRows} flexDirection="column" overflow="hidden">
        {body}
      </Box>
    </Box>
  );
}

function ExamplesView({ examples, cursor, rows, width }: { examples: ReturnType<typeof readTrainingExamples>; cursor: number; rows: number; width: number }): ReactNode {
  const ex = examples[Math.min(cursor, examples.length - 1)];
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent}>{`Training examples  ${cursor + 1}/${examples.length}  step ${ex.step}  (green trained, yellow context, red negative)`}</Text>
      <Box width={width} height={rows - 1} overflow="hidden">
        <Text wrap="wrap">
          {ex.segments.map((s, i) => (
            <Text key={i} color={s.weight > 0 ? theme.ok : s.weight < 0 ? theme.error : theme.warn}>
              {s.text}
            </Text>
          ))}
        </Text>
      </Box>
    </Box>
  );
}
