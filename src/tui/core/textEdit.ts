// Editing a one-line text buffer from raw keys: printable input appends, backspace deletes,
// ctrl+u clears. Returns the new text (pure, for reducers and tests).
import type { Key } from "ink";

export function editText(text: string, input: string, key: Key): string {
  if (key.backspace || key.delete) return text.slice(0, -1);
  if (key.ctrl && input === "u") return "";
  if (key.ctrl || key.meta || key.return || key.escape || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return text;
  // Pasted text may hold newlines; keep one line.
  return text + input.replace(/[\r\n]+/g, " ");
}

/** Moves a cursor within [0, count) by a keymap command; undefined when it is not a move. */
export function moveCursor(cmd: string, cursor: number, count: number, page = 10): number | undefined {
  const last = Math.max(0, count - 1);
  switch (cmd) {
    case "up":
      return Math.max(0, cursor - 1);
    case "down":
      return Math.min(last, cursor + 1);
    case "top":
      return 0;
    case "bottom":
      return last;
    case "pageUp":
      return Math.max(0, cursor - page);
    case "pageDown":
      return Math.min(last, cursor + page);
    default:
      return undefined;
  }
}

/** The first index of a window of `size` rows that keeps `cursor` visible. */
export function windowStart(cursor: number, count: number, size: number): number {
  if (count <= size) return 0;
  return Math.min(Math.max(0, cursor - Math.floor(size / 2)), count - size);
}
