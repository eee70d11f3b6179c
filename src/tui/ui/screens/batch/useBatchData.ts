// The Batch screen's data, re-read on a timer through src/experiments: the batches under the
// roots, and the open batch with its runs' key metrics and its comparison.
import { useCallback, useEffect, useState } from "react";
import { type BatchListing, type BatchView, listBatches, readBatchView } from "../../../../experiments/batches.ts";

/** Re-reading a batch is a few small reads (batch.json, each run's metrics tail): twice a second is plenty. */
export function batchRefreshMs(pollMs: number): number {
  return Math.max(200, pollMs * 5);
}

export function useBatches(roots: readonly string[], pollMs: number): BatchListing[] {
  const key = roots.join("\0");
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const read = useCallback(() => listBatches(roots), [key]);
  const [batches, setBatches] = useState<BatchListing[]>(read);
  useEffect(() => {
    setBatches(read());
    const timer = setInterval(() => setBatches(read()), batchRefreshMs(pollMs));
    return () => clearInterval(timer);
  }, [read, pollMs]);
  return batches;
}

export function useBatchView(dir: string | undefined, pollMs: number): BatchView | undefined {
  const [view, setView] = useState<BatchView | undefined>(() => (dir === undefined ? undefined : readBatchView(dir)));
  useEffect(() => {
    if (dir === undefined) {
      setView(undefined);
      return;
    }
    setView(readBatchView(dir));
    const timer = setInterval(() => setView(readBatchView(dir)), batchRefreshMs(pollMs));
    return () => clearInterval(timer);
  }, [dir, pollMs]);
  return view;
}
