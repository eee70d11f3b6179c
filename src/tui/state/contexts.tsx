// Split contexts (state vs actions) so components that only act do not re-render on every state
// change, plus the services the screens share. AppContainer owns them and the one key dispatcher.
import { createContext, useContext } from "react";
import type { Key } from "ink";
import type { RecipeEntry } from "../../config/index.ts";
import type { ProcessManager } from "../services/processManager.ts";
import type { AppState } from "./app.ts";
import type { Route } from "./routes.ts";

export interface TermSize {
  columns: number;
  rows: number;
}

export interface UIState extends AppState {
  size: TermSize;
}

/**
 * What a screen does with keys: commands from the keymap, or raw keys while it edits text. `C` is
 * the screen's command ids (its bindings' and the shared scopes'), so a misspelt command is a type error.
 */
export interface ScreenKeyHandler<C extends string = string> {
  /** True while a text field or dialog owns the keyboard (only `inText` bindings still resolve). */
  capturing: boolean;
  onRaw?: (input: string, key: Key) => void;
  /** Returns true when the command was handled (otherwise the app handles back/quit...). */
  onCommand(cmd: C): boolean;
  /** Who installed it: a screen unmounting only removes its own handler, not its successor's. */
  owner?: object;
}

export interface UIActions {
  push(route: Route): void;
  replace(route: Route): void;
  pop(): void;
  toggleHelp(open?: boolean): void;
  info(text: string): void;
  error(text: string): void;
  toggleOverlay(runDir: string): void;
  quit(): void;
  /** The active screen installs its key handler here (one at a time). */
  setKeyHandler(handler: ScreenKeyHandler): void;
  /** Removes the handler if `owner` installed it. */
  releaseKeyHandler(owner: object): void;
}

export interface Services {
  logRoot: string;
  /** Where the Batch screen looks for batches and experiment files (./experiments first). */
  experimentRoots: readonly string[];
  recipes: readonly RecipeEntry[];
  processes: ProcessManager;
  /** Whether launching uses the embedded engine (no base_url / TINKER_API_KEY). */
  engineLabel: string;
  /** Poll interval for tailers (ms); tests and the bench lower or raise it. */
  pollMs: number;
  /** Writes raw escapes to the terminal (OSC 52 clipboard). */
  writeRaw(text: string): void;
}

export const UIStateContext = createContext<UIState | null>(null);
export const UIActionsContext = createContext<UIActions | null>(null);
export const ServicesContext = createContext<Services | null>(null);

function need<T>(value: T | null, name: string): T {
  if (value === null) throw new Error(`${name} used outside AppContainer`);
  return value;
}

export const useUIState = (): UIState => need(useContext(UIStateContext), "useUIState");
export const useUIActions = (): UIActions => need(useContext(UIActionsContext), "useUIActions");
export const useServices = (): Services => need(useContext(ServicesContext), "useServices");
