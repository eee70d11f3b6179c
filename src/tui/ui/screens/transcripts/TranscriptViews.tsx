// The transcripts screen's views: the trajectory list beside the selected one in full, the group
// side by side, the reward histogram with a selectable bin, and supervised training examples.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import type { TokenGapRecord, TrainingExample, TranscriptRecord } from "../../../../runs/index.ts";
import { fit, fmtNum } from "../../../core/format.ts";
import { type Histogram, renderHistogram } from "../../../core/histogram.ts";
import { roleColor, theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import { findTokenGaps, GAP_LARGE, GAP_SMALL, gapLines, gapSummary } from "../../../core/tokenGaps.ts";
import { type TournamentTable, tournamentTable, versusCell } from "../../../core/tournament.ts";
import { splitRoles, wrapText } from "../../../core/transcripts.ts";

interface Line {
  text: string;
  color?: string;
  bold?: boolean;
  /** Differently coloured runs of one line (the per-token gap view); `text` is then their concatenation. */
  segments?: { text: string; color: string }[];
}

const GAP_COLOR = { small: theme.ok, medium: theme.warn, large: theme.error } as const;

/** The response token by token, coloured by |lp_student − lp_teacher|, with a legend. */
function tokenGapBlock(rec: TokenGapRecord, width: number): Line[] {
  const sum = gapSummary(rec);
  const worst = sum.worstIndex >= 0 ? ` · largest ${fmtNum(sum.worst)} at token ${sum.worstIndex}` : "";
  const lines: Line[] = [
    { text: `student − teacher log-prob per token: mean |gap| ${fmtNum(sum.meanAbs)}${worst}`, bold: true },
    {
      text: "",
      segments: [
        { text: `■ < ${GAP_SMALL}  `, color: GAP_COLOR.small },
        { text: `■ < ${GAP_LARGE}  `, color: GAP_COLOR.medium },
        { text: `■ ≥ ${GAP_LARGE} nats`, color: GAP_COLOR.large },
      ],
    },
  ];
  for (const segs of gapLines(rec, Math.max(10, width - 2))) {
    const segments = [{ text: "  ", color: theme.muted }, ...segs.map((g) => ({ text: g.text, color: GAP_COLOR[g.cls] }))];
    lines.push({ text: segments.map((g) => g.text).join(""), segments });
  }
  return lines;
}

export function detailLines(r: TranscriptRecord, width: number, gaps?: ReadonlyMap<string, TokenGapRecord>): Line[] {
  const lines: Line[] = [];
  lines.push({
    text: `group ${r.group_idx} traj ${r.traj_idx}  reward ${fmtNum(r.total_reward)} (final ${fmtNum(r.final_reward)})  advantage ${fmtNum(r.advantage)}`,
    bold: true,
  });
  const meta = [
    r.tags.length ? `tags ${r.tags.join(",")}` : "",
    r.stop_reason ? `stop ${r.stop_reason}` : "",
    r.sampling_client_step !== null ? `sampler step ${r.sampling_client_step}` : "",
    `turns ${r.steps.length}`,
  ].filter(Boolean);
  lines.push({ text: meta.join("  "), color: theme.muted });
  const versus = Object.entries(r.trajectory_logs ?? {}).filter(([k]) => k.startsWith("vs_"));
  if (versus.length) {
    const results = versus.map(([k, v]) => `#${k.slice(3)} ${versusCell(typeof v === "number" ? v : undefined)}`);
    for (const l of wrapText(`tournament (w key: the whole group): ${results.join("  ")}`, width)) lines.push({ text: l, color: theme.accent });
  }
  const metrics = Object.entries(r.trajectory_metrics).map(([k, v]) => `${k}=${fmtNum(v)}`);
  if (metrics.length) for (const l of wrapText(`metrics: ${metrics.join("  ")}`, width)) lines.push({ text: l, color: theme.muted });
  for (const s of r.steps) {
    const sm = Object.entries(s.metrics).map(([k, v]) => `${k}=${fmtNum(v)}`);
    lines.push({
      text: `turn ${s.step_idx}: ob ${s.ob_len ?? "?"} ac ${s.ac_len ?? "?"} reward ${fmtNum(s.reward)}${sm.length ? "  " + sm.join(" ") : ""}`,
      color: theme.muted,
    });
  }
  const gapRecord = gaps !== undefined ? findTokenGaps(r, gaps) : undefined;
  if (gapRecord !== undefined) lines.push(...tokenGapBlock(gapRecord, width));
  // Multi-turn episodes whose summaries carry each turn's messages read as one conversation with
  // every turn's reward where it was earned; others show the prompt and the response.
  const byTurn = r.steps.length > 1 && r.steps.every((st) => st.messages !== undefined);
  const blocks = byTurn ? splitRoles(r.prompt, "user") : [...splitRoles(r.prompt, "user"), ...splitRoles(r.response, "assistant")];
  if (blocks.length === 0 && !byTurn) lines.push({ text: "(no prompt/response text in this record)", color: theme.muted });
  const pushMessage = (role: string, text: string): void => {
    const base = role.split(" ")[0]!;
    lines.push({ text: `${role}:`, color: roleColor(base), bold: true });
    for (const l of wrapText(text, width - 2)) lines.push({ text: `  ${l}`, color: roleColor(base) });
  };
  for (const b of blocks) pushMessage(b.role, b.text);
  if (byTurn) {
    for (const st of r.steps) {
      for (const m of st.messages ?? []) pushMessage(m.role, m.text);
      const reward = st.reward ?? Number.NaN;
      lines.push({
        text: `  ⟶ turn ${st.step_idx} reward ${fmtNum(reward)}${st.episode_done ? "  (episode done)" : ""}`,
        color: reward > 0 ? theme.ok : reward < 0 ? theme.error : theme.muted,
        bold: true,
      });
    }
  }
  return lines;
}

export function ListView({
  shown,
  cursor,
  scroll,
  rows,
  width,
  gaps,
}: {
  shown: readonly TranscriptRecord[];
  cursor: number;
  scroll: number;
  rows: number;
  width: number;
  gaps?: ReadonlyMap<string, TokenGapRecord>;
}): ReactNode {
  const selected = shown[Math.min(cursor, shown.length - 1)];
  const narrow = width < 100;
  const listW = narrow ? width : Math.min(44, Math.floor(width * 0.35));
  const listRows = narrow ? Math.max(3, Math.floor(rows / 3)) : rows;
  const detailW = narrow ? width : width - listW - 1;
  const detailRows = narrow ? rows - listRows : rows;
  const start = windowStart(cursor, shown.length, listRows);
  const detail = selected ? detailLines(selected, detailW, gaps) : [];
  const list = (
    <Box flexDirection="column" width={listW} height={listRows}>
      {shown.slice(start, start + listRows).map((r, i) => (
        <Text key={`${r.group_idx}-${r.traj_idx}`} inverse={start + i === cursor} wrap="truncate">
          {fit(`g${r.group_idx}/t${r.traj_idx}`, 9)}
          <Text color={r.total_reward > 0 ? theme.ok : r.total_reward < 0 ? theme.error : theme.warn}>{fit(fmtNum(r.total_reward), 9)}</Text>
          {fit(`a ${fmtNum(r.advantage)}`, 12)}
          <Text color={theme.muted}>{fit(r.tags.join(","), Math.max(0, listW - 30))}</Text>
        </Text>
      ))}
      {shown.length === 0 ? <Text color={theme.muted}>no trajectory matches</Text> : null}
    </Box>
  );
  const detailBox = (
    <Box flexDirection="column" width={detailW} height={detailRows}>
      {detail.slice(scroll, scroll + detailRows).map((l, i) => (
        <Text key={i} color={l.color} bold={l.bold} wrap="truncate">
          {l.segments
            ? l.segments.map((g, j) => (
                <Text key={j} color={g.color}>
                  {g.text}
                </Text>
              ))
            : l.text}
        </Text>
      ))}
    </Box>
  );
  return narrow ? (
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

/** Pairwise-preference RL: who beat whom in the group, each reply's net result per opponent. */
export function TournamentTableView({ table, selected, width }: { table: TournamentTable; selected: number; width: number }): ReactNode {
  const cell = 5;
  const shown = table.members.slice(0, Math.max(1, Math.floor((width - 34) / cell)));
  return (
    <Box flexDirection="column">
      <Text
        bold
        wrap="truncate"
      >{`tournament (wins − losses against each opponent)${shown.length < table.members.length ? `, ${shown.length} of ${table.members.length} columns fit` : ""}`}</Text>
      <Text color={theme.muted} wrap="truncate">
        {fit("", 6) + shown.map((j) => fit(`vs#${j}`, cell)).join("") + fit("W−L", 8) + fit("fmt", 5) + "reward"}
      </Text>
      {table.rows.map((row) => (
        <Text key={row.traj} wrap="truncate" color={row.traj === selected ? theme.accent : undefined} bold={row.traj === selected}>
          {fit(`#${row.traj}`, 6)}
          {shown.map((j) => {
            const v = row.versus[table.members.indexOf(j)];
            return (
              <Text key={j} color={v === undefined ? theme.muted : v > 0 ? theme.ok : v < 0 ? theme.error : theme.warn}>
                {fit(versusCell(v), cell)}
              </Text>
            );
          })}
          {fit(fmtNum(row.winMinusLoss), 8)}
          {fit(fmtNum(row.format), 5)}
          {fmtNum(row.reward)}
        </Text>
      ))}
    </Box>
  );
}

export function GroupView({
  records,
  selected,
  scroll,
  rows,
  width,
}: {
  records: readonly TranscriptRecord[];
  selected: TranscriptRecord;
  scroll: number;
  rows: number;
  width: number;
}): ReactNode {
  const members = records.filter((r) => r.group_idx === selected.group_idx).sort((a, b) => a.traj_idx - b.traj_idx);
  const colW = Math.max(16, Math.floor(width / Math.max(1, Math.min(members.length, Math.floor(width / 16)))));
  const visible = members.slice(0, Math.floor(width / colW));
  const tournament = tournamentTable(members);
  const tableRows = tournament ? tournament.rows.length + 3 : 0;
  return (
    <Box flexDirection="column">
      <Text bold>{`group ${selected.group_idx}: ${members.length} trajectories${visible.length < members.length ? ` (${visible.length} fit)` : ""}`}</Text>
      {tournament ? <TournamentTableView table={tournament} selected={selected.traj_idx} width={width} /> : null}
      {tournament ? <Text> </Text> : null}
      <Box flexDirection="row">
        {visible.map((r) => (
          <Box key={r.traj_idx} flexDirection="column" width={colW}>
            <Text
              bold
              color={r.traj_idx === selected.traj_idx ? theme.accent : undefined}
              wrap="truncate"
            >{`#${r.traj_idx} r=${fmtNum(r.total_reward)} a=${fmtNum(r.advantage)}`}</Text>
            {wrapText(r.response ?? "(no text)", colW - 2)
              .slice(scroll, scroll + Math.max(1, rows - 4 - tableRows))
              .map((l, i) => (
                <Text key={i} color={theme.assistant} wrap="truncate">
                  {l}
                </Text>
              ))}
          </Box>
        ))}
      </Box>
    </Box>
  );
}

export function HistogramView({ h, total, cursor, width }: { h: Histogram; total: number; cursor: number; width: number }): ReactNode {
  return (
    <Box flexDirection="column">
      <Text bold>{`reward histogram (${total} trajectories) · j/k pick a bin, b or enter filters to it`}</Text>
      {renderHistogram(h, Math.max(10, width - 32), fmtNum).map((l, i) => (
        <Text key={i} color={theme.ok} inverse={i === cursor} wrap="truncate">
          {`${i === cursor ? "›" : " "} ${l}`}
        </Text>
      ))}
    </Box>
  );
}

export function ExamplesView({
  examples,
  cursor,
  rows,
  width,
}: {
  examples: readonly TrainingExample[];
  cursor: number;
  rows: number;
  width: number;
}): ReactNode {
  const ex = examples[Math.min(cursor, examples.length - 1)];
  return (
    <Box flexDirection="column">
      <Text
        bold
        color={theme.accent}
      >{`Training examples  ${cursor + 1}/${examples.length}  step ${ex.step}  (green trained, yellow context, red negative)`}</Text>
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
