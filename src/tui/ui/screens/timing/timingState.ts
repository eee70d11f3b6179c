// Timing screen state, pure: the step row shown, or undefined to follow the latest.
export interface TimingState {
  idx?: number;
}

export type TimingAction = { type: "left" | "right"; last: number };

/** The row index shown for a number of rows (the latest while following). */
export function shownIndex(s: TimingState, last: number): number {
  return s.idx === undefined ? last : Math.min(s.idx, last);
}

export function timingReducer(s: TimingState, a: TimingAction): TimingState {
  const at = shownIndex(s, a.last);
  if (a.type === "left") return { idx: Math.max(0, at - 1) };
  return { idx: at + 1 >= a.last ? undefined : at + 1 };
}
