// The per-token loss functions against values computed by hand.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LOSS_FUNCTIONS, resolveLoss, tokenLoss } from "../../../src/engine/model/losses.ts";

const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

describe("tokenLoss", () => {
  it("cross_entropy: -lp·w and dlp = -w", () => {
    const t = tokenLoss(resolveLoss("cross_entropy", undefined), -2.5, { weight: 0.4, advantage: 0, samplerLogprob: 0 });
    close(t.loss, 1.0, "loss");
    close(t.dlp, -0.4, "dlp");
  });

  it("importance_sampling: -exp(lp - q)·A", () => {
    const t = tokenLoss(resolveLoss("importance_sampling", undefined), -1, { weight: 1, advantage: 2, samplerLogprob: -1.5 });
    close(t.loss, -2 * Math.exp(0.5), "loss");
    close(t.dlp, -2 * Math.exp(0.5), "dlp");
    const masked = tokenLoss(resolveLoss("importance_sampling", undefined), -1, { weight: 0, advantage: 2, samplerLogprob: -1.5 });
    assert.equal(masked.loss, -0);
    assert.equal(masked.dlp, -0);
  });

  it("ppo: unclipped inside the range, clipped (zero gradient) above it for A > 0, unclipped below it", () => {
    const ppo = resolveLoss("ppo", undefined);
    // ratio = exp(0.1) ≈ 1.105, inside [0.8, 1.2].
    let t = tokenLoss(ppo, -1.0, { weight: 1, advantage: 3, samplerLogprob: -1.1 });
    close(t.loss, -3 * Math.exp(0.1), "inside loss");
    close(t.dlp, -3 * Math.exp(0.1), "inside dlp");
    // ratio = e ≈ 2.72 > 1.2 with A = 3: min(2.72·3, 1.2·3) = 3.6, constant.
    t = tokenLoss(ppo, -1, { weight: 1, advantage: 3, samplerLogprob: -2 });
    close(t.loss, -3.6, "clipped loss");
    assert.equal(t.dlp, 0);
    // Same ratio with A = -1: min(-2.72, -1.2) = -2.72, the unclipped term keeps its gradient.
    t = tokenLoss(ppo, -1, { weight: 1, advantage: -1, samplerLogprob: -2 });
    close(t.loss, Math.E, "negative advantage loss");
    close(t.dlp, Math.E, "negative advantage dlp");
    // ratio = 1/e < 0.8 with A = -1: min(-0.368, -0.8) = -0.8, clipped.
    t = tokenLoss(ppo, -2, { weight: 1, advantage: -1, samplerLogprob: -1 });
    close(t.loss, 0.8, "low clipped loss");
    assert.equal(t.dlp, 0);
    // Custom thresholds from loss_fn_config.
    const narrow = resolveLoss("ppo", { clip_low_threshold: 0.9, clip_high_threshold: 1.05 });
    t = tokenLoss(narrow, -1.0, { weight: 1, advantage: 3, samplerLogprob: -1.1 });
    close(t.loss, -3 * 1.05, "custom threshold loss");
  });

  it("cispo: -stopgrad(clip(ratio))·lp·A with defaults 0 / 4", () => {
    const cispo = resolveLoss("cispo", undefined);
    assert.equal(cispo.clipLow, 0);
    assert.equal(cispo.clipHigh, 4);
    let t = tokenLoss(cispo, -1, { weight: 1, advantage: 0.5, samplerLogprob: -1.5 });
    close(t.loss, -Math.exp(0.5) * -1 * 0.5, "loss");
    close(t.dlp, -Math.exp(0.5) * 0.5, "dlp");
    // ratio = e^2 ≈ 7.39 is clipped to 4.
    t = tokenLoss(cispo, -1, { weight: 1, advantage: 0.5, samplerLogprob: -3 });
    close(t.loss, 2, "clipped loss");
    close(t.dlp, -2, "clipped dlp");
  });

  it("dro: -(lp·A - ½β(lp - q)²), β default 0.05", () => {
    const dro = resolveLoss("dro", undefined);
    assert.equal(dro.beta, 0.05);
    const t = tokenLoss(dro, -1, { weight: 1, advantage: 2, samplerLogprob: -3 });
    close(t.loss, -(-2 - 0.5 * 0.05 * 4), "loss");
    close(t.dlp, -(2 - 0.05 * 2), "dlp");
  });

  it("every loss's dlp matches a central difference of its loss (where differentiable)", () => {
    for (const name of LOSS_FUNCTIONS) {
      const loss = resolveLoss(name, undefined);
      for (const [lp, A, q] of [
        [-1.2, 0.7, -1.3],
        [-0.5, -1.1, -0.4],
        [-3, 2, -2.9],
      ]) {
        const inputs = { weight: 0.8, advantage: A, samplerLogprob: q };
        const h = 1e-6;
        const num = (tokenLoss(loss, lp + h, inputs).loss - tokenLoss(loss, lp - h, inputs).loss) / (2 * h);
        const expected = name === "cispo" ? -Math.min(Math.exp(lp - q), 4) * A * 0.8 : num;
        assert.ok(Math.abs(tokenLoss(loss, lp, inputs).dlp - expected) < 1e-6, `${name} at lp=${lp}`);
      }
    }
  });
});

describe("resolveLoss errors", () => {
  it("names the known losses for an unknown one", () => {
    assert.throws(() => resolveLoss("mse", undefined), /unknown loss function "mse"; known: cross_entropy, importance_sampling, ppo, cispo, dro/);
  });
  it("rejects config keys the loss does not use, and bad values", () => {
    assert.throws(() => resolveLoss("cross_entropy", { beta: 1 }), /"beta" is not used by cross_entropy; it takes no config/);
    assert.throws(() => resolveLoss("ppo", { clip_epsilon: 0.2 }), /known keys: clip_low_threshold, clip_high_threshold/);
    assert.throws(() => resolveLoss("ppo", { clip_low_threshold: Number.NaN }), /must be a finite number/);
    assert.throws(() => resolveLoss("ppo", { clip_low_threshold: 1.5 }), /must not exceed clip_high_threshold \(1.2\)/);
  });
});
