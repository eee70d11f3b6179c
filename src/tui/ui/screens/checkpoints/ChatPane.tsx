// The chat box under the checkpoints list: the conversation, the sampling options (tab focuses
// them: j/k pick, +/- step, enter edits) and the message line.
import type { ReactNode } from "react";
import { Box, Text } from "ink";
import { roleColor, theme } from "../../../core/palette.ts";
import { wrapText } from "../../../core/transcripts.ts";
import type { ChatSamplingOptions } from "../../../services/sampler.ts";
import { CHAT_OPTION_KEYS, CHAT_OPTION_LABELS, chatOptionText } from "./chatOptions.ts";
import type { Chat } from "./checkpointsState.ts";

export function ChatPane({ chat, options, rows, width }: { chat: Chat; options: ChatSamplingOptions; rows: number; width: number }): ReactNode {
  const lines = chat.history.flatMap((m) =>
    wrapText(`${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`, width - 4).map((t) => ({ t, role: m.role })),
  );
  const focusOptions = chat.focus === "options";
  const optionRows = focusOptions ? CHAT_OPTION_KEYS.length : 1;
  return (
    <Box flexDirection="column" height={rows} borderStyle="round" borderColor={theme.accent}>
      <Text color={theme.muted} wrap="truncate">{`chat with ${chat.ckptName} · ${chat.status}`}</Text>
      {/* The conversation fills the box; options and the message line stay at its bottom. */}
      <Box flexDirection="column" flexGrow={1}>
        {lines.slice(-Math.max(0, rows - 4 - optionRows)).map((l, i) => (
          <Text key={i} color={roleColor(l.role)} wrap="truncate">
            {l.t}
          </Text>
        ))}
      </Box>
      {focusOptions ? (
        CHAT_OPTION_KEYS.map((k, i) => {
          const sel = i === chat.optionCursor;
          const value = sel && chat.editingOption !== undefined ? `${chat.editingOption}▏` : chatOptionText(options, k) || "(none)";
          return (
            <Text key={k} inverse={sel && chat.editingOption === undefined} wrap="truncate" color={theme.warn}>
              {`${sel ? "›" : " "} ${CHAT_OPTION_LABELS[k].padEnd(14)} ${value}`}
            </Text>
          );
        })
      ) : (
        <Text color={theme.muted} wrap="truncate">
          {`temperature ${options.temperature} · top-p ${options.topP} · max tokens ${options.maxTokens} · system ${options.systemPrompt ? JSON.stringify(options.systemPrompt) : "(none)"}  (tab: options)`}
        </Text>
      )}
      <Text wrap="truncate" color={focusOptions ? theme.muted : undefined}>{`> ${chat.input}${focusOptions ? "" : "▏"}`}</Text>
    </Box>
  );
}
