// `cookbook run <recipe> key=value ...`: parse the arguments against the recipe's schema and run it.
import { recipes } from "../../recipes/registry.ts";
import { UsageError } from "../config/errors.ts";
import { formatConfigHelp } from "../config/help.ts";
import { parseConfigArgs } from "../config/parse.ts";
import { loadRecipe } from "../config/recipe.ts";
import { defineCommand } from "./types.ts";

interface RunArgs {
  recipe?: string;
  args: string[];
  help?: boolean;
  dryRun?: boolean;
  prices?: string;
}

export const runCommand = defineCommand<RunArgs>({
  builder: (y) =>
    y
      .positional("recipe", { type: "string", describe: "recipe name (see cookbook recipes)" })
      .positional("args", { type: "string", array: true, default: [], describe: "key=value config overrides" })
      // `--help` after a recipe name shows the recipe's fields, not yargs' usage.
      .help(false)
      .option("help", { alias: "h", type: "boolean", describe: "show the recipe's config fields" })
      .option("dry-run", { type: "boolean", describe: "estimate steps, tokens, wall time (and, with base_url, cost) from a few measured steps, then exit" })
      .option("prices", { type: "string", describe: 'with --dry-run and base_url: a JSON price table {"<model>": USD per million tokens, "*": default}' })
      .parserConfiguration({ "parse-positional-numbers": false, "unknown-options-as-args": true }),
  handler: async (argv) => {
    if (!argv.recipe) throw new UsageError(`missing recipe name; one of: ${recipes.map((r) => r.name).join(", ")}`);
    const recipe = await loadRecipe(recipes, argv.recipe);
    const args = argv.args.map(String);
    if (argv.help) {
      process.stdout.write(`${formatConfigHelp(recipe)}\n`);
      return;
    }
    const config = parseConfigArgs(recipe.configSchema, args);
    if (argv.dryRun) {
      // Loaded only here: estimating is rare next to running.
      const { estimateRun } = await import("../estimate/estimateRun.ts");
      process.stdout.write(
        `${await estimateRun(recipe.name, args, config as Record<string, unknown>, { prices: argv.prices, onProgress: (m) => process.stderr.write(`${m}\n`) })}\n`,
      );
      return;
    }
    await recipe.main(config, { argv: args, commandLine: process.argv.join(" ") });
  },
});
