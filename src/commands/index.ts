// Every `cookbook` subcommand, one line each; src/cli.ts registers them in this order.
import { chatCommand } from "./chat.ts";
import { defaultCommand } from "./default.ts";
import { exportCommand } from "./export.ts";
import { recipesCommand } from "./recipes.ts";
import { runCommand } from "./run.ts";
import { runsCommand } from "./runs.ts";
import { serveCommand } from "./serve.ts";
import type { CookbookCommand } from "./types.ts";
import { vizDataCommand } from "./vizData.ts";
import { watchCommand } from "./watch.ts";

export const commands: CookbookCommand[] = [
  defaultCommand,
  runCommand,
  recipesCommand,
  runsCommand,
  vizDataCommand,
  serveCommand,
  chatCommand,
  exportCommand,
  watchCommand,
];
