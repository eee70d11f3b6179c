// The benchmark peer is a fair one: a random-weight Qwen3 and Llama (llama3 rope scaling) saved by
// transformers (bench/make_random_model.py) give the same LoRA step-0 loss in our engine
// (bench/lib/oursStep.ts) and in transformers + PEFT (bench/peft_lora_step.py); both start from
// B = 0, so the summed cross-entropy must agree to float32 rounding. Tiny widths, real layouts.
// Needs the Python 3.11 venv (made on first use).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePythonVenv } from "../pythonVenv.ts";
import type { OursResult } from "../../bench/lib/oursStep.ts";
import { benchBatch, lastJson, randomModelDir, runPeftPeer, writeBatchFile } from "../../bench/lib/peers.ts";
import { benchShape, hfJsonOf } from "../../bench/lib/shapes.ts";

const OURS = join(import.meta.dirname, "..", "..", "bench", "lib", "oursStep.ts");

for (const name of ["qwen3-0.6b", "llama-3.2-1b"]) {
  test(`${name} layout: our LoRA step-0 loss equals transformers + PEFT's on the same saved weights`, () => {
    const python = ensurePythonVenv(["torch", "transformers", "peft", "safetensors"]);
    const root = mkdtempSync(join(tmpdir(), "peft-peer-e2e-"));
    try {
      const config = { ...benchShape(name), numLayers: 2, vocabSize: 1000, hiddenSize: 128, intermediateSize: 256, numHeads: 4, numKvHeads: 2, headDim: 32 };
      const dir = randomModelDir(python, `tiny-${name}`, hfJsonOf(config), root);
      const batchFile = writeBatchFile(name, benchBatch(config.vocabSize, 3, 17), root);
      const r = spawnSync(process.execPath, ["--import", "tsx", OURS, "--model-dir", dir, "--batch", batchFile, "--steps", "1"], { encoding: "utf8" });
      const ours = lastJson<OursResult>("our step", r);
      const peer = runPeftPeer(python, dir, batchFile, { steps: 1, rank: 32, threads: 1 });
      assert.equal(ours.losses.length, 2);
      assert.equal(peer.losses.length, 2);
      // 3 × 17 tokens over a 1000-token vocabulary: about 51 · ln(1000) ≈ 352 nats before training.
      assert.ok(ours.losses[0] > 300 && ours.losses[0] < 420, `step-0 loss ${ours.losses[0]}`);
      assert.ok(Math.abs(ours.losses[0] - peer.losses[0]) <= 1e-5 * Math.abs(peer.losses[0]), `step-0 loss: ours ${ours.losses[0]}, PEFT ${peer.losses[0]}`);
      // After one AdamW step (different random A on each side) both have moved the same way.
      assert.ok(ours.losses[1] < ours.losses[0] && peer.losses[1] < peer.losses[0], `losses ours ${ours.losses}, PEFT ${peer.losses}`);
      assert.ok(peer.peak_rss_bytes > 0 && ours.peak_rss_bytes > 0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}
