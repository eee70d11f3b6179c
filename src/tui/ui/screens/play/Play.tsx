// Play by hand: the person is the policy in a recipe's environment. The conversation so far — the
// observation as the model receives it, each reply, its reward and the environment's answer — and
// an input line; enter sends the line as one reply (ended with the renderer's stop sequence, as a
// sampled reply would be). Environment authors use it to see what the policy sees and how a reply
// is scored. The same session runs behind `cookbook play`.
import { type ReactNode, useEffect, useState } from "react";
import { Box, Text } from "ink";
import { formatValue } from "../../../../log/format.ts";
import type { PlaySession } from "../../../../play/session.ts";
import { fit } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";
import { editText } from "../../../core/textEdit.ts";
import { wrapText } from "../../../core/transcripts.ts";
import { useServices, useUIActions } from "../../../state/contexts.tsx";
import { useScreenKeys } from "../../hooks/useScreenKeys.ts";
import type { RouteOf } from "../../../state/routes.ts";

export type PlayRoute = RouteOf<"play">;

interface Line {
  text: string;
  color?: string;
  bold?: boolean;
}

type Phase =
  | { kind: "loading" }
  | { kind: "error"; message: string }
  | { kind: "playing"; session: PlaySession; rendererName: string }
  | { kind: "done"; session: PlaySession; summary: string };

export function Play({ route, rows, width }: { route: PlayRoute; rows: number; width: number }): ReactNode {
  const services = useServices();
  const actions = useUIActions();
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });
  const [lines, setLines] = useState<Line[]>([]);
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);

  const say = (more: Line[]): void => setLines((l) => [...l, ...more]);
  const textLines = (text: string, color?: string): Line[] =>
    text.split("\n").flatMap((t) => wrapText(t, Math.max(10, width - 2)).map((w) => ({ text: w, color })));

  useEffect(() => {
    let live = true;
    // Loaded on demand: opening a session needs tokenizers (transformers) that no other screen does.
    import("../../../../play/open.ts")
      .then(({ openPlay }) => openPlay(services.recipes, route.recipe, route.args ?? []))
      .then(({ session, rendererName }) => {
        if (!live) return;
        setLines([{ text: "observation (as the model receives it):", bold: true }, ...textLines(session.observationText(), theme.user)]);
        setPhase({ kind: "playing", session, rendererName });
      })
      .catch((err: unknown) => live && setPhase({ kind: "error", message: (err as Error).message }));
    return () => {
      live = false;
    };
  }, [route.recipe]);

  const send = async (session: PlaySession, text: string): Promise<void> => {
    setBusy(true);
    say(textLines(`you: ${text}`, theme.assistant));
    try {
      const step = await session.act(text);
      const metrics = Object.entries(step.metrics)
        .map(([k, v]) => `${k}=${formatValue(v)}`)
        .join(" ");
      say([
        {
          text: `⟶ reward ${formatValue(step.reward)}${metrics ? `  ${metrics}` : ""}`,
          color: step.reward > 0 ? theme.ok : step.reward < 0 ? theme.error : theme.muted,
          bold: true,
        },
      ]);
      if (step.done) {
        const s = await session.summary();
        const group = s.groupReward === null ? "" : ` + group reward ${formatValue(s.groupReward)}`;
        const summary = `episode done: ${s.turns} turns, step rewards ${formatValue(s.stepRewards)}${group} = total ${formatValue(s.total)}`;
        say([{ text: summary, bold: true, color: theme.accent }]);
        setPhase({ kind: "done", session, summary });
      } else {
        say([{ text: "environment:", bold: true }, ...textLines(step.newObservationText, theme.user)]);
      }
    } catch (err) {
      actions.error((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  useScreenKeys({
    // While playing, every key belongs to the reply being typed; esc leaves.
    capturing: phase.kind === "playing",
    onRaw: (raw, key) => {
      if (phase.kind !== "playing") return;
      if (key.escape) return actions.pop();
      if (key.return) {
        if (busy || input.trim() === "") return;
        const text = input;
        setInput("");
        void send(phase.session, text);
        return;
      }
      setInput((t) => editText(t, raw, key));
    },
    onCommand: () => false,
  });

  const header = `Play ${route.recipe} — you are the policy${phase.kind === "playing" ? ` (${phase.rendererName}); type a reply, enter sends it, esc leaves` : ""}`;
  const bodyRows = Math.max(3, rows - 3);
  let footer: ReactNode;
  if (phase.kind === "loading") footer = <Text color={theme.muted}>loading the recipe's environment…</Text>;
  else if (phase.kind === "error") footer = <Text color={theme.error}>{fit(phase.message, width)}</Text>;
  else if (phase.kind === "done") footer = <Text color={theme.muted}>esc back</Text>;
  else footer = <Text>{fit(`> ${input}${busy ? " …" : "▏"}`, width)}</Text>;
  return (
    <Box flexDirection="column">
      <Text bold color={theme.accent} wrap="truncate">
        {fit(header, width)}
      </Text>
      <Box flexDirection="column" height={bodyRows} overflow="hidden">
        {lines.slice(-bodyRows).map((l, i) => (
          <Text key={i} color={l.color} bold={l.bold} wrap="truncate">
            {l.text}
          </Text>
        ))}
      </Box>
      {footer}
    </Box>
  );
}
