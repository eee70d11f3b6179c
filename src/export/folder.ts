// Writes an export folder all at once: everything goes into a hidden sibling folder that is renamed
// into place at the end, so an interrupted export never leaves a half-written model under the
// real name, and an existing non-empty folder is never overwritten.
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, rmdirSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import { TOKENIZER_FILES } from "../engine/resolve.ts";

export class ExportError extends Error {
  override name = "ExportError";
}

export function writeFolderAtomically<T>(outDir: string, write: (tmpDir: string) => T): T {
  const out = resolve(outDir);
  if (existsSync(out)) {
    if (!statSync(out).isDirectory()) throw new ExportError(`output ${out} exists and is not a folder`);
    if (readdirSync(out).length > 0) throw new ExportError(`output folder ${out} exists and is not empty; pick another --out or remove it`);
  }
  mkdirSync(dirname(out), { recursive: true });
  const tmp = join(dirname(out), `.${basename(out)}.partial-${randomBytes(4).toString("hex")}`);
  mkdirSync(tmp);
  try {
    const result = write(tmp);
    if (existsSync(out)) rmdirSync(out);
    renameSync(tmp, out);
    return result;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Copies the tokenizer (and generation config) files `fromDir` has; returns their names. */
export function copyTokenizerFiles(fromDir: string, toDir: string): string[] {
  const copied: string[] = [];
  for (const f of TOKENIZER_FILES) {
    const src = join(fromDir, f);
    if (existsSync(src)) {
      copyFileSync(src, join(toDir, f));
      copied.push(f);
    }
  }
  return copied;
}
