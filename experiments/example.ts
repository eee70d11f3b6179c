// The example experiment: the project's two tiny models (tiny-chat and its better-at-sums
// teacher) × two datasets (pirate-persona chats and addition chats), fine-tuned with sl_basic,
// then compared with the untrained models on held-out chats of both kinds (NLL) and on held-out
// sums (sampled accuracy). Runs offline in a few minutes:
//
//   npx cookbook batch experiments/example.ts            # outputs in experiments/example/
//   npx cookbook batch experiments/example.ts --dry-run  # the time it will take, measured
//
// Relative paths that start with ./ or ../ are read from this file's folder.
import { defineExperiment } from "../src/index.ts";

export default defineExperiment({
  name: "example",
  description: "tiny-chat and tiny-chat-teacher fine-tuned on persona chats and on addition chats, compared with the untrained models",
  defaults: { max_steps: 40, batch_size: 16, learning_rate: 1e-2, eval_every: 10, save_every: 20 },
  grid: {
    recipe: "sl_basic",
    models: ["tiny-chat", "tiny-chat-teacher"],
    datasets: [
      { name: "persona", overrides: { dataset: "../fixtures/data/persona_train.jsonl" } },
      // The models already know sums: a gentler rate refines them instead of shaking them loose.
      { name: "arithmetic", overrides: { dataset: "../fixtures/data/arithmetic_chats_train.jsonl", learning_rate: 3e-3 } },
    ],
  },
  test_sets: ["nll:../fixtures/data/persona_test.jsonl", "nll:../fixtures/data/arithmetic_chats_test.jsonl", "arithmetic:100"],
});
