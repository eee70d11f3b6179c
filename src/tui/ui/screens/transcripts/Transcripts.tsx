// Transcripts of a run: iterations (h/l), trajectories sorted by reward and filtered by reward
// range, tag or a histogram bin, the selected one in full (prompt/response with roles coloured,
// rewards, advantage, metrics), a group view side by side, and the iteration's reward histogram.
// Supervised runs show their logged training examples coloured by loss weight instead, DPO runs
// their held-out pairs (chosen vs rejected with implied rewards), and pairwise-preference RL groups
// their tournament table in the group view.
import { type ReactNode, useMemo, useReducer } from "react";
import { Box, Text } from "ink";
import {
  type DpoPairsByStep,
  type IterationInfo,
  iterationForStep,
  listIterations,
  readDpoPairs,
  readTokenGaps,
  readTrainingExamples,
  readTranscripts,
  type TokenGapRecord,
  type TrainingExample,
  type TranscriptRecord,
  withGroupAdvantages,
} from "../../../../runs/index.ts";
import { fit, fmtNum } from "../../../core/format.ts";
import { binRange, histogram } from "../../../core/histogram.ts";
import { theme } from "../../../core/palette.ts";
import { meanReward, selectTranscripts } from "../../../core/transcripts.ts";
import { useUIActions } from "../../../state/contexts.tsx";
import { useLoaded } from "../../hooks/useLoaded.ts";
import { useRun } from "../../hooks/useRun.ts";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import { PairsView } from "./PairsView.tsx";
import type { TranscriptsCommand } from "./transcriptsKeys.ts";
import { ExamplesView, GroupView, HistogramView, ListView } from "./TranscriptViews.tsx";
import { backHandled, effectiveFilter, initialTranscripts, transcriptsReducer } from "./transcriptsState.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type TranscriptsRoute = RouteOf<"transcripts">;

interface RunTranscriptFiles {
  iterations: IterationInfo[];
  /** Supervised runs: the logged training examples (read only when there are no iterations). */
  examples: TrainingExample[];
  /** DPO runs: the held-out pairs of each evaluation (read only when there are no iterations). */
  dpoPairs: DpoPairsByStep[];
}
const NO_FILES: RunTranscriptFiles = { iterations: [], examples: [], dpoPairs: [] };

function readRunTranscripts(runDir: string): RunTranscriptFiles {
  const iterations = listIterations(runDir);
  if (iterations.length > 0) return { iterations, examples: [], dpoPairs: [] };
  return { iterations, examples: readTrainingExamples(runDir), dpoPairs: readDpoPairs(runDir) };
}

const NO_TRANSCRIPTS: TranscriptRecord[] = [];
const NO_GAPS: Map<string, TokenGapRecord> = new Map();

const MOVES = ["up", "down", "top", "bottom"];

export function Transcripts({ route, rows, width }: { route: TranscriptsRoute; rows: number; width: number }): ReactNode {
  const { runDir } = route;
  const actions = useUIActions();
  const snap = useRun(runDir);
  // Which iterations the run has; a run without any shows its DPO pairs or training examples.
  const files = useLoaded(() => readRunTranscripts(runDir), [runDir, snap.version], NO_FILES);
  const { iterations, examples, dpoPairs } = files.value;
  const [s, dispatch] = useReducer(transcriptsReducer, undefined, () => initialTranscripts());
  // Until the person picks an iteration, the one of the route's step (a jump from another pane), else the last.
  const fromRoute = route.step === undefined ? undefined : iterationForStep(iterations, route.step);
  const iterIdx = s.iterIdx ?? (fromRoute ? iterations.indexOf(fromRoute) : undefined);
  const current = iterations[Math.min(iterIdx ?? iterations.length - 1, iterations.length - 1)];
  const here = current ? iterations.indexOf(current) : -1;
  const base = current?.summaries[0] ?? "train";
  const iteration = current?.iteration;
  // An iteration's summaries are written once, so they are read again only when another file appears.
  const transcripts = useLoaded<{ iteration: number | undefined; records: TranscriptRecord[] }>(
    () => ({ iteration, records: iteration === undefined ? NO_TRANSCRIPTS : withGroupAdvantages(readTranscripts(runDir, iteration, base)) }),
    [runDir, iteration, base, current?.summaries.length],
    { iteration: undefined, records: NO_TRANSCRIPTS },
  ).value;
  // On-policy distillation: the teacher's log-prob of every sampled token, beside the summaries (they may land later).
  const gaps = useLoaded(
    () => (iteration === undefined ? NO_GAPS : readTokenGaps(runDir, iteration, base)),
    [runDir, iteration, base, snap.version],
    NO_GAPS,
  ).value;
  const records = transcripts.records;
  const shown = useMemo(() => selectTranscripts(records, s.sort, effectiveFilter(s)), [records, s]);
  const selected = shown[Math.min(s.cursor, shown.length - 1)];
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

  // Before the first read of the run, or of another iteration's file: say so rather than show an empty list.
  if (!files.read || transcripts.iteration !== iteration) {
    return <Text color={theme.muted}>{`Transcripts — reading ${current ? `iteration ${current.iteration}` : runDir}…`}</Text>;
  }
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
