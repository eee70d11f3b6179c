// The app-level state: a stack of routes (Esc pops), the help overlay, a status message and
// which runs are overlaid. Screen-local state (cursors, filters) lives in each screen's reducer.

import type { Route } from "./routes.ts";

export interface StatusMessage {
  kind: "info" | "error";
  text: string;
  at: number;
}

export interface AppState {
  stack: Route[];
  help: boolean;
  message?: StatusMessage;
  /** Run directories overlaid on the dashboard, in colour order (the viewed run is always first). */
  overlays: string[];
  /** Bumped after every handled key so the screen re-renders (and re-installs its handler) even
   * when the key changed nothing: the dispatcher waits for that before the next queued key. */
  keySeq: number;
}

export type AppAction =
  | { type: "push"; screen: Route }
  | { type: "replace"; screen: Route }
  | { type: "pop" }
  | { type: "toggleHelp"; open?: boolean }
  | { type: "message"; kind: StatusMessage["kind"]; text: string; at?: number }
  | { type: "clearMessage" }
  | { type: "toggleOverlay"; runDir: string }
  | { type: "keyHandled" };

export function initialState(first?: Route): AppState {
  const stack: Route[] = [{ name: "home" }];
  if (first && first.name !== "home") stack.push(first);
  return { stack, help: false, overlays: [], keySeq: 0 };
}

export function currentScreen(state: AppState): Route {
  return state.stack[state.stack.length - 1];
}

export function appReducer(state: AppState, action: AppAction): AppState {
  switch (action.type) {
    case "push":
      return { ...state, stack: [...state.stack, action.screen], help: false };
    case "replace":
      return { ...state, stack: [...state.stack.slice(0, -1), action.screen], help: false };
    case "pop":
      return state.stack.length > 1 ? { ...state, stack: state.stack.slice(0, -1) } : state;
    case "toggleHelp":
      return { ...state, help: action.open ?? !state.help };
    case "message":
      return { ...state, message: { kind: action.kind, text: action.text, at: action.at ?? Date.now() } };
    case "clearMessage":
      return state.message ? { ...state, message: undefined } : state;
    case "keyHandled":
      return { ...state, keySeq: state.keySeq + 1 };
    case "toggleOverlay": {
      const has = state.overlays.includes(action.runDir);
      return { ...state, overlays: has ? state.overlays.filter((d) => d !== action.runDir) : [...state.overlays, action.runDir] };
    }
  }
}
