// Image parts → image chunks: the bytes the server's vision tower reads, and how many model
// positions it will occupy (the cookbook's image token counting, image_to_chunk). The count
// depends only on the image size and the family's resize rule, so it is computed from the
// PNG/JPEG header here; a wrong count is rejected by the server ("Expected N tokens, got M").
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { ModelInputChunk } from "../tinker/types.ts";
import { RendererError } from "./types.ts";

export type ImageFormat = "png" | "jpeg";

export interface DecodedImage {
  bytes: Buffer;
  format: ImageFormat;
  width: number;
  height: number;
}

/** Counts the vision positions an image of this size occupies for a family. */
export type ImageTokenCounter = (width: number, height: number) => number;

function describe(source: string): string {
  return source.startsWith("data:") ? `${source.slice(0, 40)}…` : JSON.stringify(source);
}

function readSource(source: string): Buffer {
  if (source.startsWith("data:")) {
    const comma = source.indexOf(",");
    if (comma === -1 || !source.slice(0, comma).toLowerCase().includes(";base64")) {
      throw new RendererError(`image ${describe(source)}: expected a base64 data URI (data:image/png;base64,…)`);
    }
    return Buffer.from(source.slice(comma + 1), "base64");
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) && !source.startsWith("file://")) {
    throw new RendererError(`image ${describe(source)}: remote URLs are not fetched while rendering; download the image and pass a local path or a data: URI`);
  }
  const file = source.startsWith("file://") ? fileURLToPath(source) : source;
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new RendererError(`image ${describe(source)}: cannot read ${file}: ${(err as Error).message}`);
  }
}

function pngSize(b: Buffer): [number, number] | null {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (b.length < 24 || !signature.every((x, i) => b[i] === x) || b.toString("latin1", 12, 16) !== "IHDR") return null;
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

function jpegSize(b: Buffer): [number, number] | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = b.readUInt16BE(i + 2);
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return [b.readUInt16BE(i + 7), b.readUInt16BE(i + 5)];
    }
    i += 2 + length;
  }
  return null;
}

/** Reads an image part's source and its size from the PNG or JPEG header. */
export function decodeImage(source: string): DecodedImage {
  const bytes = readSource(source);
  const png = pngSize(bytes);
  if (png !== null) return { bytes, format: "png", width: png[0], height: png[1] };
  const jpeg = jpegSize(bytes);
  if (jpeg !== null) return { bytes, format: "jpeg", width: jpeg[0], height: jpeg[1] };
  throw new RendererError(`image ${describe(source)}: not a PNG or JPEG (or its header is truncated); the Tinker API takes png and jpeg images`);
}

/** An image chunk for the wire with its vision-token count. */
export function imageToChunk(source: string, countTokens: ImageTokenCounter): ModelInputChunk {
  const img = decodeImage(source);
  if (img.width <= 0 || img.height <= 0) throw new RendererError(`image ${describe(source)}: size ${img.width}x${img.height} is empty`);
  return { type: "image", data: img.bytes.toString("base64"), format: img.format, expected_tokens: countTokens(img.width, img.height) };
}

/** Python's round(): halves go to the even neighbour (smart_resize relies on it). */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

export interface QwenVisionConfig {
  patchSize: number;
  mergeSize: number;
  minPixels: number;
  maxPixels: number;
}

/** Qwen3-VL's preprocessor: 16-pixel patches merged 2×2, 65,536 to 16,777,216 pixels. Qwen3.5/3.6/3.8 use the same. */
export const QWEN3_VL_VISION: QwenVisionConfig = { patchSize: 16, mergeSize: 2, minPixels: 65536, maxPixels: 16777216 };

/**
 * Qwen-VL smart resize: both sides rounded to a multiple of patch×merge, then scaled (keeping
 * the aspect ratio) into [minPixels, maxPixels]; one token per merged patch.
 */
export function qwenVisionTokenCount(width: number, height: number, cfg: QwenVisionConfig = QWEN3_VL_VISION): number {
  const factor = cfg.patchSize * cfg.mergeSize;
  if (Math.max(width, height) / Math.min(width, height) > 200) {
    throw new RendererError(`image ${width}x${height}: aspect ratio above 200, which Qwen-VL's image processor refuses`);
  }
  let h = Math.max(factor, roundHalfEven(height / factor) * factor);
  let w = Math.max(factor, roundHalfEven(width / factor) * factor);
  if (h * w > cfg.maxPixels) {
    const beta = Math.sqrt((height * width) / cfg.maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < cfg.minPixels) {
    const beta = Math.sqrt(cfg.minPixels / (height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return ((h / cfg.patchSize) * (w / cfg.patchSize)) / (cfg.mergeSize * cfg.mergeSize);
}

export interface KimiVisionConfig {
  patchSize: number;
  mergeKernelSize: number;
  inPatchLimit: number;
  patchLimitOnOneSide: number;
}

/** Kimi K2.5/K2.6's media_proc_cfg: 14-pixel patches merged 2×2, at most 16,384 patches and 512 per side. */
export const KIMI_K25_VISION: KimiVisionConfig = { patchSize: 14, mergeKernelSize: 2, inPatchLimit: 16384, patchLimitOnOneSide: 512 };

/**
 * Kimi's NaViT resize: scale down (never up) to fit the patch limits, pad each side to a multiple
 * of patch×merge, one token per merged patch.
 */
export function kimiVisionTokenCount(width: number, height: number, cfg: KimiVisionConfig = KIMI_K25_VISION): number {
  const p = cfg.patchSize;
  const byTotal = Math.sqrt(cfg.inPatchLimit / (Math.max(1, Math.floor(width / p)) * Math.max(1, Math.floor(height / p))));
  const scale = Math.min(1, byTotal, (cfg.patchLimitOnOneSide * p) / width, (cfg.patchLimitOnOneSide * p) / height);
  const w = Math.min(Math.max(1, Math.floor(width * scale)), cfg.patchLimitOnOneSide * p);
  const h = Math.min(Math.max(1, Math.floor(height * scale)), cfg.patchLimitOnOneSide * p);
  const factor = cfg.mergeKernelSize * p;
  return Math.ceil(h / factor) * Math.ceil(w / factor);
}
