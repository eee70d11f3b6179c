// An experiment's report.html renders in a real browser: a small real batch (one sl_basic run on
// the shipped tiny model, its untrained baseline, two test sets) writes the report, headless
// Chromium screenshots it, and the picture must have real content — the run's colour drawn by the
// bars and curves (far more than its legend swatches), the green of the best cells — while the rendered DOM holds a bar chart per test set,
// the training curves and the comparison table. Fails loudly without Chromium.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CHROMIUM, renderedDom, screenshot } from "../chromium.ts";

const REPO = resolve(import.meta.dirname, "../..");
/** The first run's colour in the report's palette, and the background of a best cell. */
const RUN_COLOUR = 0x0072b2;
const BEST_CELL = 0xd9f2e3;

test("an experiment's report.html renders in headless Chromium with its charts and table", { timeout: 300_000 }, () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM=/path/to/chromium`);
  const root = mkdtempSync(join(tmpdir(), "report-html-"));
  try {
    const persona = (name: string, n: number) =>
      `${readFileSync(join(REPO, "fixtures", "data", name), "utf8")
        .split("\n")
        .slice(0, n)
        .join("\n")}\n`;
    writeFileSync(join(root, "train.jsonl"), persona("persona_train.jsonl", 200));
    writeFileSync(join(root, "held_out.jsonl"), persona("persona_test.jsonl", 8));
    const file = join(root, "shot.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "shot",
        defaults: {
          model_name: "tiny-chat",
          dataset: "./train.jsonl",
          batch_size: 8,
          max_steps: 20,
          eval_every: 5,
          test_size: 8,
          lora_rank: 8,
          print_examples_every: 0,
        },
        runs: [{ name: "persona", recipe: "sl_basic" }],
        test_sets: ["nll:./held_out.jsonl", { benchmark: "arithmetic", max_examples: 8 }],
      }),
    );
    const result = spawnSync(process.execPath, [join(REPO, "bin", "cookbook.js"), "batch", file, "--root", join(root, "experiments")], {
      cwd: root,
      env: { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", FORCE_COLOR: "0" },
      encoding: "utf8",
      timeout: 240_000,
    });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const html = join(root, "experiments", "shot", "report.html");

    const dom = renderedDom(html, root);
    assert.deepEqual(
      [...dom.matchAll(/<svg[^>]*class="chart bar-chart"[^>]*data-test-set="([^"]+)"/g)].map((m) => m[1]),
      ["nll_held_out", "arithmetic"],
    );
    const curves = [...dom.matchAll(/<svg[^>]*class="chart line-chart"[^>]*data-metric="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(curves.includes("train_mean_nll") && curves.includes("test/nll"), `curves: ${curves.join(", ")}`);
    const table = /<table class="comparison">[\s\S]*?<\/table>/.exec(dom)?.[0] ?? "";
    assert.equal([...table.matchAll(/<tr class="(baseline|run)"/g)].length, 2, "the baseline and the run");
    assert.ok(/<td class="num best"/.test(table), "best cells marked");

    const image = screenshot(html, join(root, "report.png"), root, "1300,1800");
    assert.deepEqual([image.width, image.height], [1300, 1800]);
    assert.ok(image.colours > 50, `only ${image.colours} distinct colours: the page looks empty`);
    assert.ok(image.inkFraction > 0.05, `only ${(image.inkFraction * 100).toFixed(1)}% of the page differs from its background`);
    assert.ok(
      (image.counts.get(RUN_COLOUR) ?? 0) > 150,
      `the run's colour covers ${image.counts.get(RUN_COLOUR) ?? 0} sampled pixels: its bars and curves are not drawn`,
    );
    assert.ok((image.counts.get(BEST_CELL) ?? 0) > 30, "the best cells' highlight is not visible");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
