// `cookbook play <recipe> [key=value…]`: take the policy's seat in an RL recipe's environment. The
// observation is printed as the model receives it; each line typed is one action (the renderer's
// stop sequence is added as the model would end it); rewards and the environment's replies follow
// until the episode ends. Lines come from the terminal or a pipe (scripted play, tests).
import { createInterface } from "node:readline";
import { recipes } from "../../recipes/registry.ts";
import { formatValue as fmtMetric } from "../log/format.ts";
import { openPlay } from "../play/open.ts";
import { defineCommand } from "./types.ts";

interface PlayArgs {
  recipe: string;
  args: string[];
  batch?: number;
  group?: number;
}

export interface PlayIO {
  lines: AsyncIterable<string>;
  write: (text: string) => void;
}

/** Plays one episode of `recipeName` with lines from `io`; returns the episode's total reward. */
export async function runPlay(recipeName: string, args: readonly string[], io: PlayIO, options: { batch?: number; group?: number } = {}): Promise<number> {
  const { session, rendererName } = await openPlay(recipes, recipeName, args, options);
  io.write(
    `${recipeName}: you are the policy (${rendererName}); each line you type is one reply, ended as the model would end it (write \\n for a line break).\n`,
  );
  io.write(`── observation ──\n${session.observationText()}\n`);
  io.write("> ");
  for await (const line of io.lines) {
    // Replies that span lines (a code block) are typed on one line with \n for each break.
    const step = await session.act(line.replace(/\\n/g, "\n"));
    const metrics = Object.entries(step.metrics)
      .map(([k, v]) => `${k}=${fmtMetric(v)}`)
      .join(" ");
    io.write(`reward ${fmtMetric(step.reward)}${metrics ? `  ${metrics}` : ""}\n`);
    if (step.done) {
      if (step.closing !== null) io.write(`── environment ──\n${step.closing}\n`);
      break;
    }
    io.write(`── environment ──\n${step.newObservationText}\n> `);
  }
  const summary = await session.summary();
  if (!session.done) io.write("\nstopped before the episode ended\n");
  const group = summary.groupReward === null ? "" : ` + group reward ${fmtMetric(summary.groupReward)}`;
  io.write(
    `episode ${session.done ? "done" : "unfinished"}: ${summary.turns} turns, step rewards ${fmtMetric(summary.stepRewards)}${group} = total ${fmtMetric(summary.total)}\n`,
  );
  return summary.total;
}

export const playCommand = defineCommand<PlayArgs>({
  builder: (y) =>
    y
      .positional("recipe", {
        type: "string",
        demandOption: true,
        describe: "an RL recipe (guess_number, rl_basic, math_rl, tool_use, code_rl, search_tool, rubric, tic_tac_toe, twenty_questions)",
      })
      .positional("args", { type: "string", array: true, default: [], describe: "key=value config overrides, as for cookbook run" })
      .option("batch", { type: "number", describe: "which training batch to take the environment from (default 0)" })
      .option("group", { type: "number", describe: "which group of that batch (default 0)" })
      .parserConfiguration({ "parse-positional-numbers": false }),
  handler: async (argv) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    // The iterator is taken now: lines piped in while the model and environment load are kept.
    const it = rl[Symbol.asyncIterator]();
    try {
      await runPlay(
        argv.recipe,
        argv.args.map(String),
        { lines: { [Symbol.asyncIterator]: () => it }, write: (t) => void process.stdout.write(t) },
        { batch: argv.batch, group: argv.group },
      );
    } finally {
      rl.close();
    }
  },
});
