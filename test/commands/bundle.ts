// The compiled build in a scratch folder inside the checkout (so packages outside the bundle
// resolve from node_modules), and a runner script that starts it the way bin/cookbook.js does once
// it has found dist/ current (bin/compiled.js: one script with a V8 code cache).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

export interface Bundle {
  out: string;
  id: string;
  /** `node <runner> <cookbook args>` runs the compiled command. */
  runner: string;
  cleanup: () => void;
}

export function buildBundle(): Bundle {
  const out = mkdtempSync(join(ROOT, ".cookbook-test-dist-"));
  execFileSync(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--outdir", out], { stdio: "pipe" });
  const { id } = JSON.parse(readFileSync(join(out, ".built"), "utf8")) as { id: string };
  const runner = join(out, "run.mjs");
  writeFileSync(
    runner,
    `import { runBundle } from ${JSON.stringify(join(ROOT, "bin", "compiled.js"))};\nrunBundle(${JSON.stringify(out)}, ${JSON.stringify(id)});\n`,
  );
  return { out, id, runner, cleanup: () => rmSync(out, { recursive: true, force: true }) };
}
