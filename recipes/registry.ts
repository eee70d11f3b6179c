// Every recipe `cookbook` knows, one line each. `load` is a lazy import so listing recipes (and
// starting the CLI) never loads a recipe's dependencies. Add a line to register a recipe.
import type { RecipeEntry } from "../src/config/recipe.ts";

export const recipes: RecipeEntry[] = [
  { name: "example_line_fit", description: "Toy example: fit y = a·x + b by gradient descent (no model, no engine)", load: () => import("./example_line_fit/index.ts") },
  { name: "pretrain_tiny", description: "Pretrain the tiny Llama chat model from scratch on synthetic chats and addition (makes fixtures/models/tiny-chat)", load: () => import("./pretrain_tiny/index.ts") },
];
