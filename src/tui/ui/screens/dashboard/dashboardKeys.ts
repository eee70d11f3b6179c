// The dashboard's own bindings.
import { type Binding, COMMON, type CommandOf, type GlobalCommand, type ListCommand, type RunCommand } from "../../../keys/keymap.ts";

export const DASHBOARD_KEYS = [
  { ...COMMON.open, description: "Open the transcripts of the step under the cursor (picker: toggle the item)" },
  { ...COMMON.filter, description: "Filter metrics (words, !word excludes)" },
  COMMON.resumeRun,
  { id: "smoothing", keys: ["e"], description: "Toggle EMA smoothing (raw series stays visible, dimmed)", hint: "smooth" },
  { id: "emaUp", keys: ["+", "="], description: "EMA weight up (0.6–0.99; shown in the header; turns smoothing on)", hint: "EMA weight", hintKey: "+/-" },
  { id: "emaDown", keys: ["-"], description: "EMA weight down (0.6–0.99)" },
  { id: "xAxis", keys: ["x"], description: "X axis: step or elapsed time", hint: "x-axis" },
  { id: "pickMetric", keys: ["m"], description: "Add or remove charts from the filterable metric list", hint: "metrics" },
  { id: "overlay", keys: ["o"], description: "Overlay other runs (stable colours)", hint: "overlay" },
  { id: "configPane", keys: ["c"], description: "Show or hide the run's config (resolved key=value list from config.json; PgUp/PgDn scroll)", hint: "config" },
  { id: "logPane", keys: ["L"], description: "Show or hide the logs.log pane" },
  COMMON.cursorLeft,
  COMMON.cursorRight,
  COMMON.jumpTranscripts,
] as const satisfies readonly Binding[];

/** Every command the dashboard screen receives: its own bindings' and those of the scopes it shares. */
export type DashboardCommand = CommandOf<typeof DASHBOARD_KEYS> | GlobalCommand | ListCommand | RunCommand;
