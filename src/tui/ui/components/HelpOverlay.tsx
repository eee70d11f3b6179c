// `?`: every binding that applies to the current screen, rendered from the keymap's sections.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { theme } from "../../core/palette.ts";
import type { HelpSection } from "../../keys/keymap.ts";

export function HelpOverlay({ title, sections, rows, width }: { title: string; sections: readonly HelpSection[]; rows: number; width: number }): ReactNode {
  const lines: ReactNode[] = [];
  lines.push(
    <Text key="title" bold color={theme.accent}>
      Keys — {title} (esc or ? closes)
    </Text>,
  );
  for (const s of sections) {
    lines.push(
      <Text key={`s-${s.section}`} bold>
        {s.section}
      </Text>,
    );
    for (const [keys, desc] of s.rows) {
      lines.push(
        <Text key={`${s.section}-${keys}-${desc}`} wrap="truncate">
          <Text color={theme.warn}>{`  ${keys}`.padEnd(18)}</Text>
          {desc.slice(0, Math.max(0, width - 19))}
        </Text>,
      );
    }
  }
  return <Box flexDirection="column">{lines.slice(0, rows)}</Box>;
}
