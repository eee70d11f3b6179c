// Checkpoints screen state, pure: the cursor, the delete confirmation, and the chat (its
// messages, the line being typed, the sampling options and which of them has the keyboard).
import type { Key } from "ink";
import type { Message } from "../../../../renderers/index.ts";
import { editText, moveCursor } from "../../../core/textEdit.ts";
import type { ChatSamplingOptions } from "../../../services/sampler.ts";
import { CHAT_OPTION_KEYS, DEFAULT_CHAT_OPTIONS, chatOptionText, setChatOption, stepChatOption } from "./chatOptions.ts";

export interface ConfirmDelete {
  name: string;
  typed: string;
  error?: string;
}

export interface Chat {
  ckptName: string;
  history: Message[];
  input: string;
  status: string;
  /** The message line or the options list has the keyboard (tab switches). */
  focus: "input" | "options";
  optionCursor: number;
  /** Text typed into the selected option, while editing it. */
  editingOption?: string;
}

export interface CheckpointsState {
  cursor: number;
  confirm?: ConfirmDelete;
  chat?: Chat;
  /** Kept across chats: the options are the screen's, not one conversation's. */
  options: ChatSamplingOptions;
}

export const SAMPLING = "sampling…";

export type CheckpointsAction =
  | { type: "move"; cmd: string; count: number }
  | { type: "openConfirm"; name: string }
  | { type: "confirmError"; error: string }
  | { type: "closeConfirm" }
  | { type: "openChat"; ckptName: string }
  | { type: "closeChat" }
  | { type: "type"; input: string; key: Key }
  | { type: "sent" }
  | { type: "reply"; text: string }
  | { type: "chatFailed"; error: string }
  | { type: "toggleFocus" }
  | { type: "stepOption"; direction: 1 | -1 }
  | { type: "editOption" };

export const initialCheckpoints: CheckpointsState = { cursor: 0, options: DEFAULT_CHAT_OPTIONS };

/** Whether the screen takes raw keys: a dialog, the message line, or an option being edited. */
export function capturing(s: CheckpointsState): boolean {
  return s.confirm !== undefined || (s.chat !== undefined && (s.chat.focus === "input" || s.chat.editingOption !== undefined));
}

/** Whether Enter in the delete dialog deletes (the name typed in full). */
export function confirmReady(s: CheckpointsState): boolean {
  return s.confirm !== undefined && s.confirm.typed === s.confirm.name;
}

/** The message Enter would send, or undefined (empty line, or a reply still coming). */
export function pendingMessage(s: CheckpointsState): string | undefined {
  const c = s.chat;
  if (c?.focus !== "input" || c.editingOption !== undefined || c.status === SAMPLING || c.input.trim() === "") return undefined;
  return c.input;
}

function withChat(s: CheckpointsState, update: (c: Chat) => Partial<Chat>): CheckpointsState {
  return s.chat ? { ...s, chat: { ...s.chat, ...update(s.chat) } } : s;
}

function typeInChat(s: CheckpointsState, c: Chat, input: string, key: Key): CheckpointsState {
  if (c.editingOption !== undefined) {
    if (key.escape) return withChat(s, () => ({ editingOption: undefined }));
    if (key.return) {
      const set = setChatOption(s.options, CHAT_OPTION_KEYS[c.optionCursor], c.editingOption);
      if ("error" in set) return withChat(s, () => ({ status: set.error }));
      return { ...withChat(s, () => ({ editingOption: undefined, status: "options set" })), options: set };
    }
    return withChat(s, () => ({ editingOption: editText(c.editingOption!, input, key) }));
  }
  if (key.escape) return { ...s, chat: undefined };
  if (key.return) return s;
  return withChat(s, () => ({ input: editText(c.input, input, key) }));
}

export function checkpointsReducer(s: CheckpointsState, a: CheckpointsAction): CheckpointsState {
  switch (a.type) {
    case "move": {
      if (s.chat?.focus === "options") {
        const moved = moveCursor(a.cmd, s.chat.optionCursor, CHAT_OPTION_KEYS.length);
        return moved === undefined ? s : withChat(s, () => ({ optionCursor: moved }));
      }
      const moved = moveCursor(a.cmd, s.cursor, a.count);
      return moved === undefined ? s : { ...s, cursor: moved };
    }
    case "openConfirm":
      return { ...s, confirm: { name: a.name, typed: "" } };
    case "confirmError":
      return s.confirm ? { ...s, confirm: { ...s.confirm, error: a.error } } : s;
    case "closeConfirm":
      return { ...s, confirm: undefined };
    case "openChat":
      return {
        ...s,
        chat: {
          ckptName: a.ckptName,
          history: [],
          input: "",
          status: "type a message, enter sends, tab: sampling options, esc closes",
          focus: "input",
          optionCursor: 0,
        },
      };
    case "closeChat":
      return { ...s, chat: undefined };
    case "type":
      if (s.confirm) {
        if (a.key.escape) return { ...s, confirm: undefined };
        return { ...s, confirm: { ...s.confirm, typed: editText(s.confirm.typed, a.input, a.key), error: undefined } };
      }
      return s.chat ? typeInChat(s, s.chat, a.input, a.key) : s;
    case "sent":
      return withChat(s, (c) => ({ history: [...c.history, { role: "user", content: c.input }], input: "", status: SAMPLING }));
    case "reply":
      return withChat(s, (c) => ({ history: [...c.history, { role: "assistant", content: a.text }], status: "" }));
    case "chatFailed":
      return withChat(s, () => ({ status: `error: ${a.error}` }));
    case "toggleFocus":
      return withChat(s, (c) => ({ focus: c.focus === "input" ? "options" : "input", editingOption: undefined }));
    case "stepOption":
      return s.chat?.focus === "options" ? { ...s, options: stepChatOption(s.options, CHAT_OPTION_KEYS[s.chat.optionCursor], a.direction) } : s;
    case "editOption":
      return s.chat?.focus === "options" ? withChat(s, (c) => ({ editingOption: chatOptionText(s.options, CHAT_OPTION_KEYS[c.optionCursor]) })) : s;
  }
}
