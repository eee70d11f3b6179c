// Every `cookbook` subcommand, one line each; src/cli.ts registers them in this order.
import { chatCommand } from "./chat.ts";
import { defaultCommand } from "./default.ts";
import { evalCommand } from "./eval.ts";
import { exportCommand } from "./export.ts";
import { downloadCommand } from "./download.ts";
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
  evalCommand,
  vizDataCommand,
  serveCommand,
  chatCommand,
  exportCommand,
  downloadCommand,
  watchCommand,
];
