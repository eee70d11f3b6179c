// The runs of a log root, re-listed every couple of seconds; `refresh` re-lists now.
import { useCallback, useEffect, useState } from "react";
import { type RunRow, listRuns } from "../../services/runsPoller.ts";

const RUNS_REFRESH_MS = 2000;

export function useRunsList(logRoot: string): [RunRow[], () => void] {
  const [runs, setRuns] = useState<RunRow[]>(() => listRuns(logRoot));
  const refresh = useCallback(() => setRuns(listRuns(logRoot)), [logRoot]);
  useEffect(() => {
    const t = setInterval(refresh, RUNS_REFRESH_MS);
    return () => clearInterval(t);
  }, [refresh]);
  return [runs, refresh];
}
