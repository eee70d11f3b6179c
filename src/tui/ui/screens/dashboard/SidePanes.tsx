// The dashboard's optional panes: the tail of logs.log under the charts, and the run's resolved
// config (config.json as key=value) beside them.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";

export function LogPane({ lines, rows, width }: { lines: readonly string[]; rows: number; width: number }): ReactNode {
  return (
    <Box flexDirection="column" height={rows}>
      <Text color={theme.muted} wrap="truncate">
        {fit(`── logs.log ${"─".repeat(width)}`, width)}
      </Text>
      {lines.slice(-(rows - 1)).map((l, i) => (
        <Text key={i} wrap="truncate">
          {l}
        </Text>
      ))}
    </Box>
  );
}

export function ConfigPane({ entries, scroll, rows, width }: { entries: readonly [string, string][]; scroll: number; rows: number; width: number }): ReactNode {
  const shown = entries.slice(scroll, scroll + rows - 1);
  const keyW = Math.min(Math.floor(width / 2), Math.max(4, ...shown.map(([k]) => k.length)));
  const more = entries.length - scroll - shown.length;
  return (
    <Box flexDirection="column" width={width} height={rows} overflowY="hidden">
      <Text bold color={theme.accent} wrap="truncate">
        {fit(`config.json (${entries.length})${scroll > 0 ? ` from ${scroll + 1}` : ""}${more > 0 ? ` +${more}` : ""}`, width)}
      </Text>
      {entries.length === 0 ? <Text color={theme.muted}>no config.json</Text> : null}
      {shown.map(([k, v]) => (
        <Text key={k} wrap="truncate">
          <Text color={theme.muted}>{`${fit(k, keyW)}=`}</Text>
          {fit(v, Math.max(0, width - keyW - 1))}
        </Text>
      ))}
    </Box>
  );
}
