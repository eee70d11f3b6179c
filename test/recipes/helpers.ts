// What the recipe tests share: a small random model with the tiny-chat tokenizer in a temporary
// folder (COOKBOOK_HOME pointed inside it), and running a recipe the way `cookbook run` does.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { recipes } from "../../recipes/registry.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { loadRecipe } from "../../src/config/recipe.ts";
import { tinyConfigJson, writeTinyModel } from "../engine/helpers.ts";

export const REPO = resolve(import.meta.dirname, "../..");
const TOKENIZER_DIR = join(REPO, "fixtures", "models", "tiny-chat");

export interface RecipeSandbox {
  root: string;
  modelDir: string;
  cleanup: () => void;
}

export function recipeSandbox(prefix: string): RecipeSandbox {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const modelDir = join(root, "model");
  writeTinyModel(modelDir, {
    seed: 1,
    configJson: tinyConfigJson({ vocab_size: 1024, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, max_position_embeddings: 512 }),
  });
  for (const f of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]) copyFileSync(join(TOKENIZER_DIR, f), join(modelDir, f));
  const previous = process.env["COOKBOOK_HOME"];
  process.env["COOKBOOK_HOME"] = join(root, "home");
  return {
    root,
    modelDir,
    cleanup: () => {
      if (previous === undefined) delete process.env["COOKBOOK_HOME"];
      else process.env["COOKBOOK_HOME"] = previous;
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export async function runRecipe(name: string, args: string[]): Promise<void> {
  const recipe = await loadRecipe(recipes, name);
  await recipe.main(parseConfigArgs(recipe.configSchema, args), { argv: args, commandLine: `cookbook run ${name}` });
}
