// Transcripts of a run: iterations (h/l), trajectories sorted by reward and filtered by reward
// range, tag or a histogram bin, the selected one in full (prompt/response with roles coloured,
// rewards, advantage, metrics), a group view side by side, and the iteration's reward histogram.
// Supervised runs show their logged training examples coloured by loss weight instead, DPO runs
// their held-out pairs (chosen vs rejected with implied rewards), and pairwise-preference RL groups
// their tournament table in the group view.
import { type ReactNode, useMemo, useReducer } from "react";
import { Box, Text } from "ink";
import {
  iterationForStep,
  listIterations,
  readDpoPairs,
  readTokenGaps,
  readTrainingExamples,
  readTranscripts,
  withGroupAdvantages,
} from "../../../../runs/index.ts";
import { fit, fmtNum } from "../../../core/format.ts";
import { binRange, histogram } from "../../../core/histogram.ts";
import { theme } from "../../../core/palette.ts";
import { meanReward, selectTranscripts } from "../../../core/transcripts.ts";
import { useUIActions } from "../../../state/contexts.tsx";
import { useRun } from "../../hooks/useRun.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { PairsView } from "./PairsView.tsx";
import type { TranscriptsCommand } from "./transcriptsKeys.ts";
import { ExamplesView, GroupView, HistogramView, ListView } from "./TranscriptViews.tsx";
import { backHandled, effectiveFilter, initialTranscripts, transcriptsReducer } from "./transcriptsState.ts";

export type TranscriptsRoute = { name: "transcripts"; runDir: string; step?: number };

const MOVES = ["up", "down", "top", "bottom"];

export function Transcripts({ route, rows, width }: { route: TranscriptsRoute; rows: number; width: number }): ReactNode {
  const { runDir } = route;
  const actions = useUIActions();
  const snap = useRun(runDir);
  const iterations = useMemo(() => listIterations(runDir), [runDir, snap.version]);
  const [s, dispatch] = useReducer(transcriptsReducer, undefined, () => {
    const it = route.step === undefined ? undefined : iterationForStep(iterations, route.step);
    return initialTranscripts(it ? iterations.indexOf(it) : undefined);
  });
  const current = iterations[Math.min(s.iterIdx ?? iterations.length - 1, iterations.length - 1)];
  const here = current ? iterations.indexOf(current) : -1;
  const base = current?.summaries[0] ?? "train";
  const records = useMemo(
    () => (current ? withGroupAdvantages(readTranscripts(runDir, current.iteration, base)) : []),
    [runDir, current?.iteration, base, current?.summaries.length],
  );
  const shown = useMemo(() => selectTranscripts(records, s.sort, effectiveFilter(s)), [records, s]);
  // On-policy distillation: the teacher's log-prob of every sampled token, beside the summaries.
  const gaps = useMemo(() => (current ? readTokenGaps(runDir, current.iteration, base) : new Map()), [runDir, current?.iteration, base, snap.version]);
  const selected = shown[Math.min(s.cursor, shown.length - 1)];
  const examples = useMemo(() => (iterations.length === 0 ? readTrainingExamples(runDir) : []), [runDir, iterations.length, snap.version]);
  // DPO runs have no rollouts: their transcripts are the held-out pairs logged at each evaluation.
  const dpoPairs = useMemo(() => (iterations.length === 0 ? readDpoPairs(runDir) : []), [runDir, iterations.length, snap.version]);
  const pairStepIdx = Math.min(s.iterIdx ?? dpoPairs.length - 1, dpoPairs.length - 1);
  const bodyRows = rows - 2;
  const hist = useMemo(() => {
    const rewards = records.map((r) => r.total_reward);
    // No more bins than distinct rewards (binary rewards get two bars, not twelve).
    const distinct = new Set(rewards.filter((v) => Number.isFinite(v))).size;
    return histogram(rewards, Math.max(1, Math.min(12, distinct, bodyRows - 2)));
  }, [records, bodyRows]);

  const applyBin = (): void => {
    const i = Math.min(s.binCursor, hist.counts.length - 1);
    if (i < 0) return actions.error("no rewards to bin");
    dispatch({ type: "applyBin", bin: { label: `${fmtNum(hist.edges[i])}..${fmtNum(hist.edges[i + 1])}`, range: binRange(hist, i) } });
  };

  useScreenKeys<TranscriptsCommand>({
    capturing: s.typing,
    onRaw: (input, key) => dispatch({ type: "type", input, key }),
    onCommand: (cmd) => {
      const count =
        s.view === "histogram"
          ? hist.counts.length
          : iterations.length > 0
            ? shown.length
            : dpoPairs.length > 0
              ? (dpoPairs[pairStepIdx]?.pairs.length ?? 0)
              : examples.length;
      if (cmd === "pageDown" || cmd === "pageUp") dispatch({ type: "scroll", by: (cmd === "pageDown" ? 1 : -1) * Math.max(1, rows - 6) });
      else if (MOVES.includes(cmd)) dispatch({ type: "move", cmd, count });
      else if ((cmd === "prevIteration" || cmd === "nextIteration") && iterations.length === 0 && dpoPairs.length > 0) {
        dispatch({ type: "iteration", direction: cmd === "prevIteration" ? -1 : 1, current: pairStepIdx, count: dpoPairs.length });
      } else if (cmd === "prevIteration" || cmd === "nextIteration")
        dispatch({ type: "iteration", direction: cmd === "prevIteration" ? -1 : 1, current: here, count: iterations.length });
      else if (cmd === "sortReward") dispatch({ type: "sort" });
      else if (cmd === "filter") dispatch({ type: "startTyping" });
      else if (cmd === "groupView") dispatch({ type: "toggleView", view: "group" });
      else if (cmd === "histogram") dispatch({ type: "toggleView", view: "histogram" });
      else if (cmd === "binFilter" || (cmd === "open" && s.view === "histogram")) applyBin();
      else if (cmd === "open")
        actions.info(selected ? `group ${selected.group_idx} traj ${selected.traj_idx}: PgUp/PgDn scroll the detail` : "nothing selected");
      else if (cmd === "back" && backHandled(s)) dispatch({ type: "back" });
      else return false;
      return true;
    },
  });

  if (iterations.length === 0) {
    if (dpoPairs.length > 0) return <PairsView byStep={dpoPairs} stepIdx={pairStepIdx} cursor={s.cursor} scroll={s.scroll} rows={rows} width={width} />;
    if (examples.length > 0) return <ExamplesView examples={examples} cursor={s.cursor} rows={rows} width={width} />;
    return (
      <Box flexDirection="column">
        <Text bold color={theme.accent}>{`Transcripts — ${runDir}`}</Text>
        <Text color={theme.muted}>no iteration_NNNNNN/ transcripts, dpo_pairs.jsonl or train_examples.jsonl in this run (yet)</Text>
      </Box>
    );
  }

  const filterLabel = s.filterText || s.typing ? `  filter: ${s.filterText}${s.typing ? "▏" : ""}` : "";
  const binLabel = s.bin ? `  bin ${s.bin.label}` : "";
  const header = `Transcripts  iteration ${current?.iteration} (${here + 1}/${iterations.length})  ${base}  ${shown.length}/${records.length} trajectories  mean reward ${fmtNum(meanReward(records))}  sort ${s.sort}${binLabel}${filterLabel}`;
  let body: ReactNode;
  if (s.view === "histogram") body = <HistogramView h={hist} total={records.length} cursor={s.binCursor} width={width} />;
  else if (s.view === "group" && selected) body = <GroupView records={records} selected={selected} scroll={s.scroll} rows={bodyRows} width={width} />;
  else body = <ListView shown={shown} cursor={s.cursor} scroll={s.scroll} rows={bodyRows} width={width} gaps={gaps} />;
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent} wrap="truncate">
        {fit(header, width)}
      </Text>
      <Box height={bodyRows} flexDirection="column" overflow="hidden">
        {body}
      </Box>
    </Box>
  );
}
