// A run directory's live snapshot, from the shared tailer (≤ 1000/pollMs updates per second).
import { useEffect, useState } from "react";
import { type RunSnapshot, acquireTailer } from "../../services/runTailer.ts";
import { Throttle } from "../../services/throttle.ts";
import { useServices } from "../../state/contexts.tsx";

/**
 * `minIntervalMs` caps how often this screen re-renders on new data (the newest snapshot is kept
 * and delivered when the interval ends); 0 follows every tailer change.
 */
export function useRun(dir: string, minIntervalMs = 0): RunSnapshot {
  const { pollMs } = useServices();
  // Acquired during the first render so the first frame already has the data; screens are keyed
  // by run directory, so `dir` never changes for one hook instance.
  const [handle] = useState(() => acquireTailer(dir, pollMs));
  const [snap, setSnap] = useState<RunSnapshot>(handle.tailer.snapshot);
  useEffect(() => handle.release, [handle]);
  useEffect(() => {
    const throttle = new Throttle<RunSnapshot>(minIntervalMs, setSnap);
    const onChange = (s: RunSnapshot): void => throttle.push(s);
    handle.tailer.on("change", onChange);
    setSnap(handle.tailer.snapshot);
    return () => {
      throttle.cancel();
      handle.tailer.off("change", onChange);
    };
  }, [handle, minIntervalMs]);
  return snap;
}

/** Several runs at once (overlays), in the given order; `minIntervalMs` as for useRun. */
export function useRuns(dirs: readonly string[], minIntervalMs = 0): RunSnapshot[] {
  const { pollMs } = useServices();
  const key = dirs.join("\0");
  const [snaps, setSnaps] = useState<RunSnapshot[]>([]);
  useEffect(() => {
    const held = dirs.map((d) => acquireTailer(d, pollMs));
    const throttle = new Throttle<void>(minIntervalMs, () => setSnaps(held.map((h) => h.tailer.snapshot)));
    const update = (): void => throttle.push();
    update();
    for (const h of held) h.tailer.on("change", update);
    return () => {
      throttle.cancel();
      for (const h of held) {
        h.tailer.off("change", update);
        h.release();
      }
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, pollMs, minIntervalMs]);
  return snaps;
}
