// The shape of a command file: a yargs command module. Commands are collected in index.ts.
import type { CommandModule } from "yargs";

export type CookbookCommand = CommandModule<object, object>;

/** Keeps each command's own argument types while letting index.ts hold them in one array. */
export function defineCommand<U extends object>(module: CommandModule<object, U>): CookbookCommand {
  return module as unknown as CookbookCommand;
}
