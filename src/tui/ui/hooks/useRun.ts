// A run directory's live snapshot, from the shared tailer (≤ 1000/pollMs updates per second).
import { useEffect, useState } from "react";
import { type RunSnapshot, acquireTailer } from "../../services/runTailer.ts";
import { useServices } from "../../state/contexts.tsx";

export function useRun(dir: string): RunSnapshot {
  const { pollMs } = useServices();
  // Acquired during the first render so the first frame already has the data; screens are keyed
  // by run directory, so `dir` never changes for one hook instance.
  const [handle] = useState(() => acquireTailer(dir, pollMs));
  const [snap, setSnap] = useState<RunSnapshot>(handle.tailer.snapshot);
  useEffect(() => {
    const onChange = (s: RunSnapshot): void => setSnap(s);
    handle.tailer.on("change", onChange);
    setSnap(handle.tailer.snapshot);
    return () => {
      handle.tailer.off("change", onChange);
      handle.release();
    };
  }, [handle]);
  return snap;
}

/** Several runs at once (overlays), in the given order. */
export function useRuns(dirs: readonly string[]): RunSnapshot[] {
  const { pollMs } = useServices();
  const key = dirs.join("\0");
  const [snaps, setSnaps] = useState<RunSnapshot[]>([]);
  useEffect(() => {
    const held = dirs.map((d) => acquireTailer(d, pollMs));
    const update = (): void => setSnaps(held.map((h) => h.tailer.snapshot));
    update();
    for (const h of held) h.tailer.on("change", update);
    return () => {
      for (const h of held) {
        h.tailer.off("change", update);
        h.release();
      }
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, pollMs]);
  return snaps;
}
