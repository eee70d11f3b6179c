// The tool_use recipe end to end on the embedded engine with a small random model: the warm-up
// runs once into <log_path>-warmup, RL starts from its final weights and logs the tool-call share;
// the finished warm-up is reused by a rerun with the same settings and redone with other ones.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { recipes } from "../../recipes/registry.ts";
import { loadRecipe } from "../../src/config/recipe.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { tinyConfigJson, writeTinyModel } from "../engine/helpers.ts";

const REPO = resolve(import.meta.dirname, "../..");

test("tool_use: warm-up then RL, the warm-up reused on a second run", { timeout: 180_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "tool-use-"));
  const previous = process.env["COOKBOOK_HOME"];
  process.env["COOKBOOK_HOME"] = join(root, "home");
  try {
    const modelDir = join(root, "model");
    writeTinyModel(modelDir, {
      seed: 1,
      configJson: tinyConfigJson({ vocab_size: 1024, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, max_position_embeddings: 512 }),
    });
    for (const f of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"])
      copyFileSync(join(REPO, "fixtures", "models", "tiny-chat", f), join(modelDir, f));
    const entry = recipes.find((r) => r.name === "tool_use");
    assert.ok(entry);
    const recipe = await loadRecipe(recipes, "tool_use");
    assert.equal(recipe.description, entry.description);
    const logDir = join(root, "run");
    const args = [
      `model_name=${modelDir}`,
      `log_path=${logDir}`,
      "group_size=2",
      "groups_per_batch=2",
      "max_tokens=6",
      "lora_rank=4",
      "warmup_steps=2",
      "warmup_batch_size=2",
      "max_steps=2",
      "behavior_if_log_dir_exists=delete",
    ];
    await recipe.main(parseConfigArgs(recipe.configSchema, args), { argv: args, commandLine: "cookbook run tool_use" });
    const warm = readCheckpoints(`${logDir}-warmup`);
    assert.equal(warm.at(-1)?.final, true);
    const rows = readMetrics(logDir);
    assert.deepEqual(
      rows.map((r) => r.step),
      [0, 1],
    );
    for (const row of rows) {
      const share = row["env/all/called_tool"];
      assert.equal(typeof share, "number");
      assert.ok((share as number) >= 0 && (share as number) <= 1);
    }
    // A second run with a fresh RL directory reuses the finished warm-up instead of training it again.
    await recipe.main(parseConfigArgs(recipe.configSchema, args), { argv: args, commandLine: "cookbook run tool_use" });
    assert.equal(readCheckpoints(`${logDir}-warmup`).length, warm.length);
    const marker = join(`${logDir}-warmup`, "warmup.json");
    const before = readFileSync(marker, "utf8");
    // Other warm-up settings redo it rather than reuse weights trained on other transcripts.
    const changed = [...args, "warmup_tool_share=0.5"];
    await recipe.main(parseConfigArgs(recipe.configSchema, changed), { argv: changed, commandLine: "cookbook run tool_use" });
    const after = readFileSync(marker, "utf8");
    assert.notEqual(after, before);
    assert.match(after, /\\"tool_share\\":0\.5/);
  } finally {
    if (previous === undefined) delete process.env["COOKBOOK_HOME"];
    else process.env["COOKBOOK_HOME"] = previous;
    rmSync(root, { recursive: true, force: true });
  }
});
