// Driving the real UI in a private tmux server, as the TUI end-to-end tests do: send keys, read
// the screen, wait for something to appear.
import { execaSync } from "execa";

export interface TmuxDriver {
  tmux: (...args: string[]) => string;
  screen: () => string;
  keys: (...k: string[]) => void;
  waitFor: (pred: (s: string) => boolean, what: string, timeoutMs?: number) => Promise<string>;
  /** The list row marked › (the selection). */
  selectedLine: (s: string) => string;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function tmuxDriver(socket: string, session: string): TmuxDriver {
  const tmux = (...args: string[]): string => execaSync("tmux", ["-L", socket, ...args], { stripFinalNewline: false }).stdout;
  const screen = (): string => tmux("capture-pane", "-p", "-t", session);
  return {
    tmux,
    screen,
    keys: (...k) => void tmux("send-keys", "-t", session, ...k),
    waitFor: async (pred, what, timeoutMs = 60_000) => {
      const end = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < end) {
        last = screen();
        if (pred(last)) return last;
        await sleep(200);
      }
      throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
    },
    selectedLine: (s) => s.split("\n").find((l) => l.startsWith("› ")) ?? "",
  };
}
