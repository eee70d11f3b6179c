// Two rows: the latest status message, then the key hints of the current screen (from the keymap).
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { fit } from "../../core/format.ts";
import { theme } from "../../core/palette.ts";
import { useUIState } from "../../state/contexts.tsx";

export function Footer({ hints, width }: { hints: string; width: number }): ReactNode {
  const { message } = useUIState();
  return (
    <Box flexDirection="column" height={2}>
      <Text color={message?.kind === "error" ? theme.error : theme.accent} wrap="truncate">
        {fit(message?.text ?? "", width)}
      </Text>
      <Text color={theme.muted} wrap="truncate">
        {fit(hints, width)}
      </Text>
    </Box>
  );
}
