// An RL iteration's train.html renders in a real browser: a short rl_basic run on the embedded
// engine (random tiny model) writes iteration_000000/train.html, headless Chromium screenshots it,
// and the PNG must be a full-size image with real content. Fails loudly without Chromium.
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { recipes } from "../../recipes/registry.ts";
import { loadRecipe } from "../../src/config/recipe.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { tinyConfigJson, writeTinyModel } from "../../test/engine/helpers.ts";
import { CHROMIUM, screenshot } from "../chromium.ts";

const REPO = resolve(import.meta.dirname, "../..");

test("an RL iteration's train.html renders in headless Chromium", { timeout: 300_000 }, async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM=/path/to/chromium`);
  const root = mkdtempSync(join(tmpdir(), "rl-html-"));
  const previousHome = process.env["COOKBOOK_HOME"];
  process.env["COOKBOOK_HOME"] = join(root, "home");
  try {
    const modelDir = join(root, "model");
    writeTinyModel(modelDir, {
      seed: 2,
      configJson: tinyConfigJson({ vocab_size: 1024, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, max_position_embeddings: 512 }),
    });
    for (const f of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"])
      copyFileSync(join(REPO, "fixtures", "models", "tiny-chat", f), join(modelDir, f));
    const logDir = join(root, "run");
    const recipe = await loadRecipe(recipes, "rl_basic");
    const args = [
      `model_name=${modelDir}`,
      `log_path=${logDir}`,
      "group_size=3",
      "groups_per_batch=2",
      "max_tokens=6",
      "lora_rank=4",
      "max_steps=1",
      "behavior_if_log_dir_exists=delete",
    ];
    await recipe.main(parseConfigArgs(recipe.configSchema, args), { argv: args, commandLine: "cookbook run rl_basic" });
    const html = join(logDir, "iteration_000000", "train.html");
    assert.ok(existsSync(html), "train.html written");

    const image = screenshot(html, join(root, "train.png"), root, "1200,1600");
    assert.deepEqual([image.width, image.height], [1200, 1600]);
    // A blank or error page has a handful of colours; text, tables and coloured borders many.
    assert.ok(image.colours > 50, `only ${image.colours} distinct colours: the page looks empty`);
    assert.ok(image.inkFraction > 0.05, `only ${(image.inkFraction * 100).toFixed(1)}% of the page differs from its background`);
  } finally {
    if (previousHome === undefined) delete process.env["COOKBOOK_HOME"];
    else process.env["COOKBOOK_HOME"] = previousHome;
    rmSync(root, { recursive: true, force: true });
  }
});
