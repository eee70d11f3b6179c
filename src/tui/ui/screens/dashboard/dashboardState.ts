// Dashboard state, pure: smoothing and its EMA weight, x axis, which panes are open (logs,
// config), which metrics were added or removed, the metric/overlay picker and the step cursor.
import type { Key } from "ink";
import { EMA_WEIGHT, stepEmaWeight } from "../../../core/dashboard.ts";
import type { XAxis } from "../../../core/series.ts";
import { editText, moveCursor } from "../../../core/textEdit.ts";

export interface Picker {
  kind: "metric" | "overlay";
  filter: string;
  typing: boolean;
  cursor: number;
  /** Overlay candidates (run directories), listed when the picker opened. */
  choices: readonly string[];
}

export interface DashboardState {
  smooth: boolean;
  emaWeight: number;
  xAxis: XAxis;
  showLog: boolean;
  showConfig: boolean;
  configScroll: number;
  added: readonly string[];
  removed: readonly string[];
  picker?: Picker;
  /** Metrics row under the step cursor; undefined follows the latest step. */
  cursorIdx?: number;
}

export type DashboardAction =
  | { type: "toggleSmoothing" }
  | { type: "emaStep"; direction: 1 | -1 }
  | { type: "toggleXAxis" }
  | { type: "toggleLog" }
  | { type: "toggleConfig" }
  | { type: "scrollConfig"; by: number; count: number }
  | { type: "openPicker"; kind: Picker["kind"]; typing: boolean; choices?: readonly string[] }
  | { type: "closePicker" }
  | { type: "pickerMove"; cmd: string; count: number }
  | { type: "pickerTyping" }
  | { type: "pickerType"; input: string; key: Key }
  | { type: "toggleMetric"; key: string; charted: boolean }
  | { type: "cursor"; direction: 1 | -1; rows: number }
  | { type: "clearCursor" };

export const initialDashboard: DashboardState = {
  smooth: false,
  emaWeight: EMA_WEIGHT,
  xAxis: "step",
  showLog: true,
  showConfig: false,
  configScroll: 0,
  added: [],
  removed: [],
};

/** Charts shown: the kind's defaults minus removed ones, then added ones. */
export function chartKeys(s: DashboardState, defaults: readonly string[]): string[] {
  const base = defaults.filter((k) => !s.removed.includes(k));
  return [...base, ...s.added.filter((k) => !base.includes(k))];
}

export function dashboardReducer(s: DashboardState, a: DashboardAction): DashboardState {
  switch (a.type) {
    case "toggleSmoothing":
      return { ...s, smooth: !s.smooth };
    case "emaStep":
      // Changing the weight of a raw view turns smoothing on: the change should be visible.
      return { ...s, smooth: true, emaWeight: s.smooth ? stepEmaWeight(s.emaWeight, a.direction) : s.emaWeight };
    case "toggleXAxis":
      return { ...s, xAxis: s.xAxis === "step" ? "time" : "step" };
    case "toggleLog":
      return { ...s, showLog: !s.showLog };
    case "toggleConfig":
      return { ...s, showConfig: !s.showConfig, configScroll: 0 };
    case "scrollConfig":
      return { ...s, configScroll: Math.max(0, Math.min(Math.max(0, a.count - 1), s.configScroll + a.by)) };
    case "openPicker":
      return { ...s, picker: { kind: a.kind, filter: "", typing: a.typing, cursor: 0, choices: a.choices ?? [] } };
    case "closePicker":
      return { ...s, picker: undefined };
    case "pickerMove": {
      if (!s.picker) return s;
      const moved = moveCursor(a.cmd, s.picker.cursor, a.count);
      return moved === undefined ? s : { ...s, picker: { ...s.picker, cursor: moved } };
    }
    case "pickerTyping":
      return s.picker ? { ...s, picker: { ...s.picker, typing: true } } : s;
    case "pickerType": {
      if (!s.picker) return s;
      if (a.key.escape || a.key.return) return { ...s, picker: { ...s.picker, typing: false } };
      return { ...s, picker: { ...s.picker, filter: editText(s.picker.filter, a.input, a.key), cursor: 0 } };
    }
    case "toggleMetric":
      return a.charted
        ? { ...s, added: s.added.filter((k) => k !== a.key), removed: [...s.removed, a.key] }
        : { ...s, removed: s.removed.filter((k) => k !== a.key), added: [...s.added, a.key] };
    case "cursor": {
      const last = a.rows - 1;
      const stride = Math.max(1, Math.round(a.rows / 60));
      const from = s.cursorIdx ?? last;
      if (a.direction < 0) return { ...s, cursorIdx: Math.max(0, from - stride) };
      const next = from + stride;
      return { ...s, cursorIdx: next >= last ? undefined : next };
    }
    case "clearCursor":
      return { ...s, cursorIdx: undefined };
  }
}
