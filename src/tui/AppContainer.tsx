// Owns the app reducer, terminal size, services and the single key dispatcher; publishes them
// through the split contexts. Keys: help overlay first, then a capturing screen (text entry; only
// `inText` bindings still resolve), then the keymap (screen commands, then app commands: back,
// quit, run panes). The keymap and the panes come from the screen registry.
import { type ReactNode, useCallback, useMemo, useReducer, useRef } from "react";
import { type Key, useApp, useInput } from "ink";
import { NO_KEY } from "./keys/keymap.ts";
import { appReducer, currentScreen, initialState } from "./state/app.ts";
import { type Route, routeRunDir } from "./state/routes.ts";
import {
  type ScreenKeyHandler,
  type Services,
  ServicesContext,
  type TermSize,
  type UIActions,
  UIActionsContext,
  type UIState,
  UIStateContext,
} from "./state/contexts.tsx";
import { useTerminalSize } from "./ui/hooks/useTerminalSize.ts";
import { REGISTRY, type ScreenRegistry } from "./ui/screens/registry.ts";
import { RegistryContext } from "./registryContext.ts";

export interface AppContainerProps {
  services: Services;
  first?: Route;
  size?: TermSize;
  /** The screens (default: the app's registry). */
  registry?: ScreenRegistry;
  children: ReactNode;
}

/** A chunk of plain characters as separate key presses (CR/LF as Enter, DEL as Backspace). */
export function splitKeys(input: string, key: Key): [string, Key][] {
  const plain = !key.ctrl && !key.meta && !key.escape && !key.upArrow && !key.downArrow && !key.leftArrow && !key.rightArrow;
  if (input.length <= 1 || !plain) return [[input, key]];
  return [...input].map((c): [string, Key] => {
    if (c === "\r" || c === "\n") return ["", { ...NO_KEY, return: true }];
    if (c === "\x7f" || c === "\b") return ["", { ...NO_KEY, backspace: true }];
    if (c === "\t") return ["", { ...NO_KEY, tab: true }];
    const code = c.charCodeAt(0);
    if (code < 0x20) return [String.fromCharCode(code + 96), { ...NO_KEY, ctrl: true }];
    return [c, { ...NO_KEY, shift: c !== c.toLowerCase() }];
  });
}

/** Longest wait for the render after a handled key (actions that change nothing do not render). */
const KEY_SETTLE_MS = 2000;

export function AppContainer({ services, first, size: fixedSize, registry = REGISTRY, children }: AppContainerProps): ReactNode {
  const [state, dispatch] = useReducer(appReducer, first, initialState);
  const size = useTerminalSize(fixedSize);
  const { exit } = useApp();
  const handlerRef = useRef<ScreenKeyHandler | undefined>(undefined);
  const rendered = useRef<() => void>(() => {});

  const actions = useMemo<UIActions>(
    () => ({
      push: (route) => dispatch({ type: "push", screen: route }),
      replace: (route) => dispatch({ type: "replace", screen: route }),
      pop: () => dispatch({ type: "pop" }),
      toggleHelp: (open) => dispatch({ type: "toggleHelp", open }),
      info: (text) => dispatch({ type: "message", kind: "info", text }),
      error: (text) => dispatch({ type: "message", kind: "error", text }),
      toggleOverlay: (runDir) => dispatch({ type: "toggleOverlay", runDir }),
      quit: () => exit(),
      setKeyHandler: (h) => {
        handlerRef.current = h;
        rendered.current();
      },
      releaseKeyHandler: (owner) => {
        if (handlerRef.current?.owner === owner) handlerRef.current = undefined;
      },
    }),
    [exit],
  );

  const screen = currentScreen(state);
  const onOneKey = useCallback(
    (input: string, key: Key): boolean => {
      if (key.ctrl && input === "c") {
        // Never a signal to background runs: it only closes this window onto them.
        exit();
        return false;
      }
      if (state.help) {
        if (key.escape || input === "?" || input === "q") dispatch({ type: "toggleHelp", open: false });
        return true;
      }
      const handler = handlerRef.current;
      const typing = handler?.capturing ?? false;
      const cmd = registry.keymap.resolve(screen.name, input, key, typing);
      if (typing && cmd === undefined) {
        handler?.onRaw?.(input, key);
        return true;
      }
      if (cmd === undefined) return false;
      if (cmd === "help") {
        dispatch({ type: "toggleHelp" });
        return true;
      }
      try {
        if (handler?.onCommand(cmd)) return true;
      } catch (err) {
        // A refused action (e.g. signalling a run that is not running) is a message, not a crash.
        dispatch({ type: "message", kind: "error", text: (err as Error).message });
        return true;
      }
      const runDir = routeRunDir(screen);
      const pane = runDir === undefined ? undefined : registry.paneRoute(cmd, runDir);
      if (cmd === "back") dispatch({ type: "pop" });
      else if (cmd === "quit") exit();
      else if (pane !== undefined) dispatch({ type: "replace", screen: pane });
      return true;
    },
    [state.help, screen, exit, registry],
  );
  // Keys typed faster than a frame (or sent by tmux) arrive as one chunk: replay them one by one.
  // Each key must see the state the previous one produced: after a key is handled, the next waits
  // until the screen has rendered again (it re-installs its handler) or a short fallback delay.
  const queue = useRef<[string, Key][]>([]);
  const latest = useRef(onOneKey);
  latest.current = onOneKey;
  const waiting = useRef(false);
  const fallback = useRef<NodeJS.Timeout | undefined>(undefined);
  const drain = useCallback(() => {
    while (!waiting.current && queue.current.length > 0) {
      const [input, key] = queue.current.shift()!;
      if (!latest.current(input, key)) continue;
      dispatch({ type: "keyHandled" });
      waiting.current = true;
      fallback.current = setTimeout(() => {
        waiting.current = false;
        drain();
      }, KEY_SETTLE_MS);
    }
  }, []);
  rendered.current = () => {
    if (!waiting.current) return;
    waiting.current = false;
    clearTimeout(fallback.current);
    setTimeout(drain, 0);
  };
  const onKey = useCallback(
    (input: string, key: Key) => {
      queue.current.push(...splitKeys(input, key));
      drain();
    },
    [drain],
  );
  useInput(onKey);

  const uiState = useMemo<UIState>(() => ({ ...state, size }), [state, size]);
  return (
    <ServicesContext.Provider value={services}>
      <UIActionsContext.Provider value={actions}>
        <UIStateContext.Provider value={uiState}>
          <RegistryContext.Provider value={registry}>{children}</RegistryContext.Provider>
        </UIStateContext.Provider>
      </UIActionsContext.Provider>
    </ServicesContext.Provider>
  );
}
