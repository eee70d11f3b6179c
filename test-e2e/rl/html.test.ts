// An RL iteration's train.html renders in a real browser: a short rl_basic run on the embedded
// engine (random tiny model) writes iteration_000000/train.html, headless Chromium screenshots it,
// and the PNG must be a full-size image with real content. Fails loudly without Chromium.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { inflateSync } from "node:zlib";
import { recipes } from "../../recipes/registry.ts";
import { loadRecipe } from "../../src/config/recipe.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { tinyConfigJson, writeTinyModel } from "../../test/engine/helpers.ts";

const REPO = resolve(import.meta.dirname, "../..");
const CHROMIUM = process.env["CHROMIUM"] ?? "/usr/bin/chromium";

interface Png {
  width: number;
  height: number;
  /** Distinct RGB colours among sampled pixels. */
  colours: number;
  /** Fraction of sampled pixels that differ from the most common colour. */
  inkFraction: number;
}

/** Just enough PNG decoding (8-bit RGB/RGBA, non-interlaced) to judge what was drawn. */
function readPng(buf: Buffer): Png {
  assert.deepEqual([...buf.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "PNG signature");
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString("ascii", pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, "8-bit PNG");
      assert.equal(data[12], 0, "non-interlaced PNG");
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      assert.ok(channels > 0, `colour type ${data[9]} (expected RGB or RGBA)`);
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  const paeth = (a: number, b: number, c: number) => {
    const p = a + b - c;
    const pa = Math.abs(p - a);
    const pb = Math.abs(p - b);
    const pc = Math.abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  };
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x]!;
      const a = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      const pred = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      pixels[y * stride + x] = (v + pred) & 0xff;
    }
  }
  const counts = new Map<number, number>();
  let n = 0;
  for (let y = 0; y < height; y += 3) {
    for (let x = 0; x < width; x += 3) {
      const i = y * stride + x * channels;
      const rgb = (pixels[i]! << 16) | (pixels[i + 1]! << 8) | pixels[i + 2]!;
      counts.set(rgb, (counts.get(rgb) ?? 0) + 1);
      n += 1;
    }
  }
  const top = Math.max(...counts.values());
  return { width, height, colours: counts.size, inkFraction: 1 - top / n };
}

test("an RL iteration's train.html renders in headless Chromium", { timeout: 300_000 }, async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM=/path/to/chromium`);
  const root = mkdtempSync(join(tmpdir(), "rl-html-"));
  const previousHome = process.env["COOKBOOK_HOME"];
  process.env["COOKBOOK_HOME"] = join(root, "home");
  try {
    const modelDir = join(root, "model");
    writeTinyModel(modelDir, { seed: 2, configJson: tinyConfigJson({ vocab_size: 1024, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, max_position_embeddings: 512 }) });
    for (const f of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]) copyFileSync(join(REPO, "fixtures", "models", "tiny-chat", f), join(modelDir, f));
    const logDir = join(root, "run");
    const recipe = await loadRecipe(recipes, "rl_basic");
    const args = [`model_name=${modelDir}`, `log_path=${logDir}`, "group_size=3", "groups_per_batch=2", "max_tokens=6", "lora_rank=4", "max_steps=1", "behavior_if_log_dir_exists=delete"];
    await recipe.main(parseConfigArgs(recipe.configSchema, args), { argv: args, commandLine: "cookbook run rl_basic" });
    const html = join(logDir, "iteration_000000", "train.html");
    assert.ok(existsSync(html), "train.html written");

    const png = join(root, "train.png");
    const result = spawnSync(
      CHROMIUM,
      [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", `--user-data-dir=${join(root, "chromium-profile")}`, `--screenshot=${png}`, "--window-size=1200,1600", pathToFileURL(html).href,
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    assert.ok(existsSync(png), `Chromium wrote no screenshot (exit ${result.status}, signal ${result.signal}): ${result.stderr}`);
    const image = readPng(readFileSync(png));
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
