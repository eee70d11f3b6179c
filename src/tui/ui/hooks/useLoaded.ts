// Data a screen reads from disk, read after the frame is drawn instead of while React renders it:
// render stays a pure function of state, a large file never holds up a keypress's frame, and a
// screen keeps showing what it had until the new read lands.
import { type DependencyList, useEffect, useState } from "react";

export interface Loaded<T> {
  /** The newest read (`initial` before the first). */
  value: T;
  /** Whether anything was read yet. */
  read: boolean;
  /** Whether `value` was read for the current `deps` (false while a read for new ones is pending). */
  current: boolean;
}

const sameDeps = (a: DependencyList, b: DependencyList): boolean => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

/** `load()`'s result, read again whenever `deps` change. */
export function useLoaded<T>(load: () => T, deps: DependencyList, initial: T): Loaded<T> {
  const [state, setState] = useState<{ value: T; deps: DependencyList | null }>({ value: initial, deps: null });
  useEffect(() => {
    setState({ value: load(), deps });
    // The caller names what the read depends on; `load` is a new closure every render.
  }, deps);
  return { value: state.value, read: state.deps !== null, current: state.deps !== null && sameDeps(state.deps, deps) };
}
