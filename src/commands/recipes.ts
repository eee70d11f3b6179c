// `cookbook recipes`: the registered recipes and their one-line descriptions (nothing is imported).
import { recipes } from "../../recipes/registry.ts";
import { formatColumns } from "../log/format.ts";
import { defineCommand } from "./types.ts";

export const recipesCommand = defineCommand<{ json?: boolean }>({
  builder: (y) => y.option("json", { type: "boolean", describe: "print JSON" }),
  handler: (argv) => {
    if (argv.json) {
      process.stdout.write(
        `${JSON.stringify(
          recipes.map(({ name, description }) => ({ name, description })),
          null,
          2,
        )}\n`,
      );
      return;
    }
    for (const line of formatColumns(recipes.map((r) => [r.name, r.description]))) process.stdout.write(`${line}\n`);
  },
});
