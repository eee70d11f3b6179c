// Every `cookbook` subcommand, one line each, in the order src/cli.ts registers them. A command's
// usage line and description live here and its options and handler in its own file, which is
// imported only when that command runs: `cookbook recipes` does not load zod, the engine or Ink.
import type { CookbookCommand } from "./types.ts";

export interface CommandEntry {
  /** The first word on the command line ("$0" for the default command). */
  name: string;
  command: string;
  describe: string;
  load: () => Promise<CookbookCommand>;
}

export const commandEntries: readonly CommandEntry[] = [
  {
    name: "$0",
    command: "$0",
    describe: "Open the terminal UI (runs, dashboards, transcripts, checkpoints, launching recipes)",
    load: async () => (await import("./default.ts")).defaultCommand,
  },
  {
    name: "run",
    command: "run [recipe] [args..]",
    describe: "Run a recipe with key=value config overrides (--help lists its fields)",
    load: async () => (await import("./run.ts")).runCommand,
  },
  { name: "recipes", command: "recipes", describe: "List the recipes", load: async () => (await import("./recipes.ts")).recipesCommand },
  {
    name: "runs",
    command: "runs [dir]",
    describe: "List run directories (status, recipe, last step, main metrics, age)",
    load: async () => (await import("./runs.ts")).runsCommand,
  },
  {
    name: "eval",
    command: "eval [model] [args..]",
    describe: "Evaluate a model, tinker:// checkpoint or run directory on benchmarks (results in the eval store)",
    load: async () => (await import("./eval.ts")).evalCommand,
  },
  {
    name: "batch",
    command: "batch [file] [args..]",
    describe:
      "Train an experiment's runs (models × datasets × settings) in turn, then compare them and the base models on test sets (comparison table and HTML report)",
    load: async () => (await import("./batch.ts")).batchCommand,
  },
  {
    name: "viz-data",
    command: "viz-data <file> [args..]",
    describe: "Show conversations from a JSONL file as training tokens, trained tokens highlighted",
    load: async () => (await import("./vizData.ts")).vizDataCommand,
  },
  {
    name: "play",
    command: "play <recipe> [args..]",
    describe: "Play an RL recipe's environment by hand: you are the policy, each line you type is one reply",
    load: async () => (await import("./play.ts")).playCommand,
  },
  {
    name: "serve",
    command: "serve",
    describe: "Serve the embedded engine over the Tinker API (point recipes at it with base_url=http://HOST:PORT)",
    load: async () => (await import("./serve.ts")).serveCommand,
  },
  {
    name: "chat",
    command: "chat <target>",
    describe: "Chat with a model or a tinker:// checkpoint; replies stream as they are sampled",
    load: async () => (await import("./chat.ts")).chatCommand,
  },
  {
    name: "export",
    command: "export <path>",
    describe: "Export a tinker:// checkpoint as a PEFT adapter (--adapter) or a merged Hugging Face model (--merged)",
    load: async () => (await import("./export.ts")).exportCommand,
  },
  {
    name: "download",
    command: "download <path>",
    describe: "Download a checkpoint (tinker://<run>/weights/<name> or …/sampler_weights/<name>) and unpack it",
    load: async () => (await import("./download.ts")).downloadCommand,
  },
  {
    name: "watch",
    command: "watch <run_dir>",
    describe: "Watch one run: the dashboard on a terminal, or a text snapshot with --once",
    load: async () => (await import("./watch.ts")).watchCommand,
  },
];

/** The full command module: its options and handler with the entry's usage line and description. */
export async function loadCommand(entry: CommandEntry): Promise<CookbookCommand> {
  return { ...(await entry.load()), command: entry.command, describe: entry.describe };
}

/** Every command, loaded (tests and tools that need all of them). */
export function loadAllCommands(): Promise<CookbookCommand[]> {
  return Promise.all(commandEntries.map(loadCommand));
}
