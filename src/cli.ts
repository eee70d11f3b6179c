// The `cookbook` command line: yargs over the command modules in src/commands/. Usage errors print
// one line and exit 2; failures print one line and exit 1 (COOKBOOK_DEBUG=1 shows the stack).
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { commandEntries, loadCommand } from "./commands/index.ts";
import { UsageError } from "./config/errors.ts";

/**
 * yargs' factory looks for a package.json to guess the version `--version` prints (ours: the
 * bundle points it at the package dist/ is in, scripts/bundlePatches.mjs); where it finds none,
 * its failed assert makes an AssertionError whose constructor formats its own stack, and
 * formatting a stack of the bundle loads the bundle's source map. Without frames there is nothing
 * to map.
 */
function withoutStackFrames<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export async function runCli(argv: readonly string[]): Promise<number> {
  let parser = withoutStackFrames(() => yargs([...argv]))
    .scriptName("cookbook")
    .strict()
    .help()
    .alias("help", "h")
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, err) => {
      throw err ?? new UsageError(message ?? "invalid arguments");
    });
  // Only the command being run is loaded; the others are listed (for --help and strict parsing)
  // with their usage line and description alone.
  const first = argv.find((a) => !a.startsWith("-"));
  const invoked = commandEntries.find((e) => e.name === first) ?? commandEntries.find((e) => e.name === "$0");
  for (const entry of commandEntries) {
    parser = parser.command(entry === invoked ? await loadCommand(entry) : { command: entry.command, describe: entry.describe, handler: () => undefined });
  }
  try {
    await parser.parseAsync();
    return 0;
  } catch (err) {
    const usage = err instanceof UsageError;
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    if (process.env.COOKBOOK_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return usage ? 2 : 1;
  }
}

// Output piped into a reader that has stopped (`cookbook runs | head`) ends the command quietly,
// as Unix tools do, rather than with an unhandled EPIPE stack.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
}

// Not a top-level await: the bundle bin/cookbook.js loads is a script (see scripts/build.mjs).
// Recipes may leave unref'd timers; only the exit code matters once the command is done.
void runCli(hideBin(process.argv)).then((code) => {
  process.exitCode = code;
});
