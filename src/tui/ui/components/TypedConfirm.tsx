// Type-to-confirm for destructive actions: the exact word must be typed; a blocked state explains
// why the action is refused (e.g. a live run) and only Esc leaves it.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { theme } from "../../core/palette.ts";

export interface TypedConfirmProps {
  title: string;
  word: string;
  typed: string;
  refusal?: string;
  error?: string;
}

export function TypedConfirm({ title, word, typed, refusal, error }: TypedConfirmProps): ReactNode {
  const matches = typed === word;
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={refusal ? theme.warn : theme.error} paddingX={1}>
      <Text bold color={theme.error}>
        {title}
      </Text>
      {refusal ? (
        <Text color={theme.warn}>Refused: {refusal}. (esc closes)</Text>
      ) : (
        <>
          <Text>
            Type <Text bold>{word}</Text> to confirm:{" "}
            <Text color={matches ? theme.ok : typed === "" || word.startsWith(typed) ? undefined : theme.error}>{typed}</Text>
            <Text inverse> </Text>
          </Text>
          <Text color={theme.muted}>{matches ? "enter deletes · esc cancels" : "esc cancels"}</Text>
        </>
      )}
      {error ? <Text color={theme.error}>{error}</Text> : null}
    </Box>
  );
}
