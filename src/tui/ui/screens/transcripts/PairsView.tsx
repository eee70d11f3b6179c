// DPO runs: the held-out pairs logged at an evaluation step, each with the policy's implied rewards
// β·(log π − log π_ref) for the chosen and the rejected reply; the selected pair in full.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { type DpoPairsByStep, pairMargin } from "../../../../runs/index.ts";
import { fit, fmtNum } from "../../../core/format.ts";
import { roleColor, theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import { wrapText } from "../../../core/transcripts.ts";

interface Line {
  text: string;
  color?: string;
  bold?: boolean;
}

/** The prompt on one line without special tokens or the trailing generation header, for the list. */
export function promptPreview(prompt: string): string {
  return prompt
    .replace(/<\|[^|>]*\|>/g, "")
    .replace(/\s*Assistant:\s*$/, "")
    .replace(/\s+/g, " ")
    .trim();
}

export function pairDetailLines(p: DpoPairsByStep["pairs"][number], width: number): Line[] {
  const margin = pairMargin(p);
  const lines: Line[] = [
    {
      text: `pair ${p.pair}  margin ${fmtNum(margin)}  ${margin > 0 ? "✓ prefers the chosen reply" : "✗ prefers the rejected reply"}`,
      bold: true,
      color: margin > 0 ? theme.ok : theme.error,
    },
    { text: "prompt:", bold: true, color: roleColor("user") },
  ];
  for (const l of wrapText(p.prompt, width - 2)) lines.push({ text: `  ${l}`, color: roleColor("user") });
  lines.push({ text: `chosen  (reward ${fmtNum(p.chosen_reward)}):`, bold: true, color: theme.ok });
  for (const l of wrapText(p.chosen, width - 2)) lines.push({ text: `  ${l}`, color: theme.ok });
  lines.push({ text: `rejected (reward ${fmtNum(p.rejected_reward)}):`, bold: true, color: theme.error });
  for (const l of wrapText(p.rejected, width - 2)) lines.push({ text: `  ${l}`, color: theme.error });
  return lines;
}

export function PairsView({
  byStep,
  stepIdx,
  cursor,
  scroll,
  rows,
  width,
}: {
  byStep: readonly DpoPairsByStep[];
  stepIdx: number;
  cursor: number;
  scroll: number;
  rows: number;
  width: number;
}): ReactNode {
  const current = byStep[Math.min(stepIdx, byStep.length - 1)]!;
  const pairs = current.pairs;
  const selected = pairs[Math.min(cursor, pairs.length - 1)];
  const preferred = pairs.filter((p) => pairMargin(p) > 0).length;
  const header = `DPO pairs  eval step ${current.step} (${stepIdx + 1}/${byStep.length})  ${preferred}/${pairs.length} pairs prefer the chosen reply  mean margin ${fmtNum(pairs.reduce((s, p) => s + pairMargin(p), 0) / Math.max(1, pairs.length))}`;
  const narrow = width < 100;
  const listW = narrow ? width : Math.min(34, Math.floor(width * 0.3));
  const bodyRows = rows - 1;
  const listRows = narrow ? Math.max(3, Math.floor(bodyRows / 3)) : bodyRows;
  const detailW = narrow ? width : width - listW - 1;
  const detailRows = narrow ? bodyRows - listRows : bodyRows;
  const start = windowStart(cursor, pairs.length, listRows);
  const detail = selected ? pairDetailLines(selected, detailW) : [];
  const list = (
    <Box flexDirection="column" width={listW} height={listRows}>
      {pairs.slice(start, start + listRows).map((p, i) => {
        const m = pairMargin(p);
        return (
          <Text key={p.pair} inverse={start + i === cursor} wrap="truncate">
            {fit(`pair ${p.pair}`, 9)}
            <Text color={m > 0 ? theme.ok : theme.error}>{fit(`${m > 0 ? "✓" : "✗"} ${fmtNum(m)}`, 12)}</Text>
            <Text color={theme.muted}>{fit(promptPreview(p.prompt), Math.max(0, listW - 21))}</Text>
          </Text>
        );
      })}
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
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent} wrap="truncate">
        {fit(header, width)}
      </Text>
      {narrow ? (
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
      )}
    </Box>
  );
}
