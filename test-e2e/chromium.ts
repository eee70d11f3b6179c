// Headless Chromium for the HTML pages the project writes (RL iterations, experiment reports):
// a screenshot, the DOM after rendering, and just enough PNG decoding to judge what was drawn.
// Fails loudly without Chromium.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inflateSync } from "node:zlib";

export const CHROMIUM = process.env["CHROMIUM"] ?? "/usr/bin/chromium";

function chromiumArgs(profileDir: string): string[] {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM=/path/to/chromium`);
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    `--user-data-dir=${profileDir}`,
  ];
}

/** Screenshots a page into `png` (size "W,H") and returns the decoded image. */
export function screenshot(html: string, png: string, workDir: string, size: string): Png {
  const result = spawnSync(
    CHROMIUM,
    [...chromiumArgs(join(workDir, "chromium-profile")), `--screenshot=${png}`, `--window-size=${size}`, pathToFileURL(html).href],
    { encoding: "utf8", timeout: 120_000 },
  );
  assert.ok(existsSync(png), `Chromium wrote no screenshot (exit ${result.status}, signal ${result.signal}): ${result.stderr}`);
  return readPng(readFileSync(png));
}

/** The page's DOM after Chromium has parsed and laid it out. */
export function renderedDom(html: string, workDir: string): string {
  const result = spawnSync(CHROMIUM, [...chromiumArgs(join(workDir, "chromium-profile")), "--dump-dom", pathToFileURL(html).href], {
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(result.status, 0, `Chromium --dump-dom failed (signal ${result.signal}): ${result.stderr}`);
  return result.stdout;
}

export interface Png {
  width: number;
  height: number;
  /** Distinct RGB colours among sampled pixels. */
  colours: number;
  /** Fraction of sampled pixels that differ from the most common colour. */
  inkFraction: number;
  /** Sampled pixels by 0xRRGGBB colour. */
  counts: Map<number, number>;
}

/** Just enough PNG decoding (8-bit RGB/RGBA, non-interlaced) to judge what was drawn. */
export function readPng(buf: Buffer): Png {
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
  return { width, height, colours: counts.size, inkFraction: 1 - top / n, counts };
}
