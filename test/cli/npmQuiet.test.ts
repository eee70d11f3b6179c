// npm stays quiet and offline-safe in this project: no project config keys npm does not know (npm
// 11 warns about them on every `npm`/`npx` call), and onnxruntime-node's install script — which
// downloads CUDA libraries — is denied through package.json's install-script policy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

test("npm prints no 'Unknown project config' warning here", () => {
  const r = spawnSync("npm", ["pkg", "get", "name"], { cwd: ROOT, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout), "tinker-cookbook-ts");
  assert.doesNotMatch(r.stderr, /Unknown project config/);
});

test("onnxruntime-node's downloading install script is denied, the others are reviewed", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> };
  assert.equal(pkg.allowScripts?.["onnxruntime-node"], false);
  const r = spawnSync("npm", ["approve-scripts", "--allow-scripts-pending"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(
    r.stdout,
    /No packages with unreviewed install scripts/,
    `${r.stdout}\nA dependency with an install script was added: review it, then record it in package.json with ` +
      "`npm approve-scripts --no-allow-scripts-pin <pkg>` or `npm deny-scripts <pkg>` (a script that downloads must be denied).",
  );
});
