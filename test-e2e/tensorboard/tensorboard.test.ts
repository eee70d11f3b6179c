// A real run with tensorboard=true, read back by TensorBoard's own reader (the `tensorboard` pip
// package): every numeric metric of metrics.jsonl is a scalar series with the same steps and values.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readMetrics } from "../../src/log/metrics.ts";
import { ensurePythonVenv, runPythonJson } from "../pythonVenv.ts";

const CLI = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");

test("TensorBoard's EventAccumulator reads our event files: same tags, steps and values as metrics.jsonl", () => {
  const python = ensurePythonVenv(["tensorboard"]);
  const dir = mkdtempSync(join(tmpdir(), "tb-e2e-"));
  try {
    const run = join(dir, "sl");
    execFileSync(
      process.execPath,
      [
        CLI,
        "run",
        "sl_basic",
        `log_path=${run}`,
        "max_steps=4",
        "batch_size=8",
        "eval_every=2",
        "save_every=0",
        "tensorboard=true",
        "behavior_if_log_dir_exists=delete",
      ],
      {
        env: { ...process.env, COOKBOOK_HOME: join(dir, "home"), HF_HUB_OFFLINE: "1" },
        stdio: "ignore",
      },
    );
    const { tags } = runPythonJson<{ tags: Record<string, [number, number][]> }>(python, join(import.meta.dirname, "readEvents.py"), {
      dir: join(run, "tensorboard"),
    });
    const rows = readMetrics(run);
    assert.ok(rows.length >= 4, `${rows.length} metrics rows`);
    const expected = new Map<string, [number, number][]>();
    for (const r of rows) {
      for (const [k, v] of Object.entries(r)) {
        if (k === "step" || typeof v !== "number" || !Number.isFinite(v)) continue;
        expected.set(k, [...(expected.get(k) ?? []), [r.step, v]]);
      }
    }
    assert.deepEqual(Object.keys(tags).sort(), [...expected.keys()].sort(), "one series per numeric metric");
    for (const [tag, points] of expected) {
      const got = tags[tag]!;
      assert.deepEqual(
        got.map((p) => p[0]),
        points.map((p) => p[0]),
        `${tag}: steps`,
      );
      got.forEach(([, v], i) => {
        const want = points[i]![1];
        assert.ok(Math.abs(v - want) <= 1e-6 * Math.max(1, Math.abs(want)), `${tag} step ${points[i]![0]}: ${v} vs ${want}`);
      });
    }
    assert.ok("train_mean_nll" in tags && tags["train_mean_nll"]!.length === 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
