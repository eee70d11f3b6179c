// Finite-difference gradient checks in float64 for every kind of trainable tensor and every loss.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ModelConfig } from "../../../src/engine/model/config.ts";
import { resolveLoss, tokenLoss } from "../../../src/engine/model/losses.ts";
import type { SequenceInput } from "../../../src/engine/model/model.ts";
import { FULL, LLAMA3_SCALED, LORA_ALL, gradCheck, inputsFor, makeModel64, randomizeTrainable, tinyBatch, tinyConfig } from "./helpers.ts";

const PROJS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
const FUSED_PROJS = ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"];

describe("full-mode gradients (float64 finite differences)", () => {
  const cases: Array<[string, ModelConfig, string[]]> = [
    ["llama untied: every weight and norm", tinyConfig("llama"), ["lm_head.weight", "model.norm.weight", "model.embed_tokens.weight"]],
    ["llama tied: the embedding gets gradient from the lookup and the head", tinyConfig("llama", { tieWordEmbeddings: true }), ["model.embed_tokens.weight"]],
    ["qwen2: q/k/v biases", tinyConfig("qwen2"), ["model.layers.1.self_attn.q_proj.bias", "model.layers.0.self_attn.v_proj.bias"]],
    ["llama attention_bias: o_proj bias too", tinyConfig("llama", { attentionBias: true }), ["model.layers.0.self_attn.o_proj.bias"]],
    ["qwen3: q_norm and k_norm", tinyConfig("qwen3"), ["model.layers.0.self_attn.q_norm.weight", "model.layers.1.self_attn.k_norm.weight"]],
    ["llama3 rope scaling", LLAMA3_SCALED, ["model.layers.0.self_attn.q_proj.weight"]],
    [
      "olmo2: post-norms and q/k norms over the whole projection",
      tinyConfig("olmo2"),
      ["model.layers.0.self_attn.q_norm.weight", "model.layers.1.self_attn.k_norm.weight", "model.layers.0.post_feedforward_layernorm.weight"],
    ],
    [
      "gemma3: (1 + w) sandwich norms, sliding and global layers, GELU-tanh, scaled tied embeddings",
      tinyConfig("gemma3_text"),
      [
        "model.layers.0.pre_feedforward_layernorm.weight",
        "model.layers.1.post_feedforward_layernorm.weight",
        "model.layers.0.self_attn.q_norm.weight",
        "model.embed_tokens.weight",
        "model.norm.weight",
      ],
    ],
    ["smollm3: a NoPE layer with a sliding window", tinyConfig("smollm3"), ["model.layers.1.self_attn.k_proj.weight"]],
    [
      "qwen3_moe: the router and every expert of a sparse layer, a dense layer, q/k norms",
      tinyConfig("qwen3_moe"),
      ["model.layers.0.mlp.gate.weight", "model.layers.0.mlp.experts.2.down_proj.weight", "model.layers.1.mlp.up_proj.weight"],
    ],
    [
      "qwen3_moe with norm_topk_prob false",
      tinyConfig("qwen3_moe", {
        moe: { numExperts: 3, topK: 2, normTopkProb: false, expertIntermediateSize: 6, sparseLayers: [true, true], routerAuxLossCoef: 0 },
      }),
      ["model.layers.1.mlp.gate.weight", "model.layers.0.mlp.experts.1.up_proj.weight"],
    ],
    [
      "phi3: fused qkv_proj and gate_up_proj, sliding window",
      tinyConfig("phi3"),
      ["model.layers.1.self_attn.qkv_proj.weight", "model.layers.0.mlp.gate_up_proj.weight"],
    ],
    [
      "qwen3_5_text: the Gated DeltaNet (projections, conv, A_log, dt_bias, gated norm) and the gated attention",
      tinyConfig("qwen3_5_text"),
      [
        "model.layers.0.linear_attn.in_proj_qkv.weight",
        "model.layers.0.linear_attn.in_proj_z.weight",
        "model.layers.0.linear_attn.in_proj_b.weight",
        "model.layers.0.linear_attn.in_proj_a.weight",
        "model.layers.0.linear_attn.out_proj.weight",
        "model.layers.0.linear_attn.conv1d.weight",
        "model.layers.0.linear_attn.A_log",
        "model.layers.0.linear_attn.dt_bias",
        "model.layers.0.linear_attn.norm.weight",
        "model.layers.1.self_attn.q_norm.weight",
      ],
    ],
  ];
  it("gpt_oss: sinks, q/k/v/o biases, the router with its bias, the fused experts with theirs", () => {
    const config = tinyConfig("gpt_oss");
    const model = makeModel64(config, FULL);
    const checked = gradCheck(model, inputsFor(tinyBatch(config, 3, [7, 5]), "cross_entropy"), { loss: "cross_entropy" });
    assert.equal(checked.length, model.parameters().length);
    for (let l = 0; l < 2; l++)
      for (const n of [
        "self_attn.sinks",
        "self_attn.q_proj.bias",
        "self_attn.o_proj.bias",
        "mlp.router.weight",
        "mlp.router.bias",
        "mlp.experts.gate_up_proj",
        "mlp.experts.gate_up_proj_bias",
        "mlp.experts.down_proj",
        "mlp.experts.down_proj_bias",
      ])
        assert.ok(checked.includes(`model.layers.${l}.${n}`), `layer ${l} ${n} not checked`);
  });

  for (const [name, config, mustInclude] of cases) {
    it(name, () => {
      const model = makeModel64(config, FULL);
      const checked = gradCheck(model, inputsFor(tinyBatch(config), "cross_entropy"), { loss: "cross_entropy" });
      assert.equal(checked.length, model.parameters().length);
      for (const n of mustInclude) assert.ok(checked.includes(n), `${n} was not checked`);
      for (const p of config.fusedProjections === true ? FUSED_PROJS : PROJS)
        assert.ok(
          checked.some((n) => n.endsWith(`${p}.weight`)),
          `${p} not checked`,
        );
      assert.ok(checked.includes("model.layers.1.post_attention_layernorm.weight"));
      if (config.normPlacement !== "post") assert.ok(checked.includes("model.layers.0.input_layernorm.weight"));
    });
  }
});

describe("Qwen3.5's delta rule over more tokens than a state checkpoint spans", () => {
  it("full mode: a 70-token sequence (two checkpoint chunks, the second recomputed from the first's end state) and a 3-token one", () => {
    const config = tinyConfig("qwen3_5_text", { maxPositionEmbeddings: 128 });
    const model = makeModel64(config, FULL);
    const checked = gradCheck(model, inputsFor(tinyBatch(config, 3, [70, 3]), "cross_entropy"), {
      loss: "cross_entropy",
      filter: (n) => n.includes("linear_attn") || n.includes("embed"),
    });
    assert.equal(checked.length, 10);
  });
});

describe("LoRA gradients (float64 finite differences)", () => {
  for (const [name, config] of [
    ["llama untied", tinyConfig("llama")],
    ["llama tied (unembed adapter on the output projection of a tied matrix)", tinyConfig("llama", { tieWordEmbeddings: true })],
    ["qwen2", tinyConfig("qwen2")],
    ["qwen3 tied", tinyConfig("qwen3", { tieWordEmbeddings: true })],
    ["llama3 rope scaling", LLAMA3_SCALED],
    ["olmo2", tinyConfig("olmo2")],
    ["gemma3 (tied, sliding window)", tinyConfig("gemma3_text")],
    ["smollm3 (NoPE layer)", tinyConfig("smollm3")],
    ["phi3 (A shared by the fused parts, B by rows)", tinyConfig("phi3")],
  ] as Array<[string, ModelConfig]>) {
    it(`${name}: A and B of every projection and lm_head`, () => {
      const model = makeModel64(config, LORA_ALL);
      randomizeTrainable(model, 5);
      const checked = gradCheck(model, inputsFor(tinyBatch(config), "cross_entropy"), { loss: "cross_entropy" });
      const projs = config.fusedProjections === true ? FUSED_PROJS : PROJS;
      assert.equal(checked.length, 2 * (projs.length * config.numLayers + 1));
      for (const p of projs)
        for (const ab of ["lora_A", "lora_B"]) {
          assert.ok(
            checked.some((n) => n.includes(p) && n.includes(ab)),
            `${p} ${ab} not checked`,
          );
        }
      assert.ok(checked.includes("base_model.model.lm_head.lora_A.weight"));
      assert.ok(checked.includes("base_model.model.lm_head.lora_B.weight"));
    });
  }

  for (const normTopkProb of [true, false]) {
    it(`qwen3_moe (norm_topk_prob ${normTopkProb}): the experts' shared-outer w1/w3/w2 factors, the dense layer's and the attention's; gradients reach earlier layers through the router`, () => {
      const base = tinyConfig("qwen3_moe");
      const config = { ...base, moe: { ...(base.moe as NonNullable<ModelConfig["moe"]>), normTopkProb } };
      const model = makeModel64(config, LORA_ALL);
      randomizeTrainable(model, 5);
      const checked = gradCheck(model, inputsFor(tinyBatch(config), "cross_entropy"), { loss: "cross_entropy" });
      // Layer 0: 4 attention + the experts' w1/w3/w2; layer 1: 4 attention + 3 dense; lm_head.
      assert.equal(checked.length, 2 * (4 + 3 + 4 + 3 + 1));
      const moe = config.moe;
      const [E, r, D, F] = [moe.numExperts, LORA_ALL.mode === "lora" ? LORA_ALL.rank : 0, config.hiddenSize, moe.expertIntermediateSize];
      for (const [suffix, shape] of Object.entries(tinkerExpertShapes(E, r, D, F))) {
        const name = `base_model.model.model.layers.0.mlp.experts.${suffix}.weight`;
        assert.ok(checked.includes(name), `${name} not checked`);
        assert.deepEqual(model.parameters().find((t) => t.name === name)?.shape, shape, name);
      }
      assert.ok(!checked.some((n) => /experts\.\d/.test(n)), "no expert has an adapter of its own");
      assert.ok(!checked.some((n) => n.includes("mlp.gate.")), "the router carries no adapter");
    });
  }

  it("qwen3_5_text: A and B of the linear attention's in_proj_qkv/z/b/a and out_proj, the gated q_proj's, the MLPs' and lm_head", () => {
    const config = tinyConfig("qwen3_5_text");
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 5);
    const checked = gradCheck(model, inputsFor(tinyBatch(config), "cross_entropy"), { loss: "cross_entropy" });
    // Layer 0: 5 linear-attention projections + 3 MLP; layer 1: 4 attention + 3 MLP; lm_head.
    assert.equal(checked.length, 2 * (5 + 3 + 4 + 3 + 1));
    for (const p of ["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj"])
      assert.ok(checked.includes(`base_model.model.model.layers.0.linear_attn.${p}.lora_A.weight`), p);
    assert.ok(checked.includes("base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight"));
  });

  it("gpt_oss: A and B of every attention projection, lm_head and the experts' shared-outer w1/w3/w2 factors; gradients pass sinks and the clamped experts", () => {
    const config = tinyConfig("gpt_oss");
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 5);
    const checked = gradCheck(model, inputsFor(tinyBatch(config, 3, [7, 5]), "cross_entropy"), { loss: "cross_entropy", entries: 4 });
    assert.equal(checked.length, 2 * (4 * config.numLayers + 1) + 6 * config.numLayers);
    assert.ok(checked.includes("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"));
    const moe = config.moe as NonNullable<ModelConfig["moe"]>;
    const [E, r, D, F] = [moe.numExperts, LORA_ALL.mode === "lora" ? LORA_ALL.rank : 0, config.hiddenSize, moe.expertIntermediateSize];
    for (let l = 0; l < config.numLayers; l++)
      for (const [suffix, shape] of Object.entries(tinkerExpertShapes(E, r, D, F))) {
        const name = `base_model.model.model.layers.${l}.mlp.experts.${suffix}.weight`;
        assert.ok(checked.includes(name), `${name} not checked`);
        assert.deepEqual(model.parameters().find((t) => t.name === name)?.shape, shape, name);
      }
    assert.ok(!checked.some((n) => n.includes("mlp.router")), "the router carries no adapter");
  });

  it("gpt_oss: the experts' factors alone (train_mlp only), float64 finite differences through both layers", () => {
    const config = tinyConfig("gpt_oss");
    const model = makeModel64(config, { mode: "lora", rank: 2, seed: 3, trainAttn: false, trainMlp: true, trainUnembed: false });
    randomizeTrainable(model, 11);
    const checked = gradCheck(model, inputsFor(tinyBatch(config, 5, [6, 6]), "cross_entropy"), { loss: "cross_entropy", entries: 6 });
    assert.equal(checked.length, 6 * config.numLayers);
    assert.ok(checked.every((n) => /mlp\.experts\.w[123]\.lora_[AB]\.weight$/.test(n)));
  });

  it("only the selected targets get adapters (attention only)", () => {
    const config = tinyConfig("llama");
    const model = makeModel64(config, { mode: "lora", rank: 4, seed: 1, trainAttn: true, trainMlp: false, trainUnembed: false });
    randomizeTrainable(model, 2);
    const checked = gradCheck(model, inputsFor(tinyBatch(config), "cross_entropy"), { loss: "cross_entropy", entries: 1 });
    assert.equal(checked.length, 2 * 4 * config.numLayers);
    assert.ok(checked.every((n) => n.includes("self_attn")));
  });
});

/** Tinker's expert factor shapes: the hidden-side factor shared ([1, …]), the other per expert ([E, …]). */
function tinkerExpertShapes(E: number, r: number, D: number, F: number): Record<string, number[]> {
  return {
    "w1.lora_A": [1, r, D],
    "w1.lora_B": [E, F, r],
    "w3.lora_A": [1, r, D],
    "w3.lora_B": [E, F, r],
    "w2.lora_A": [E, r, F],
    "w2.lora_B": [1, D, r],
  };
}

/** Sets sampler logprobs so tokens fall inside and on both sides of the clip range. */
function withSamplerOffsets(batch: SequenceInput[], lps: Float32Array[]): SequenceInput[] {
  const offsets = [-1, 1, 0, -1, 1, 0.05, -0.05, 0];
  let k = 0;
  return batch.map((d, s) => ({
    inputTokens: d.inputTokens,
    lossInputs: {
      ...d.lossInputs,
      logprobs: Float32Array.from(lps[s], (lp) => lp + offsets[k++ % offsets.length]),
    },
  }));
}

describe("loss gradients (float64 finite differences, LoRA model)", () => {
  const config = tinyConfig("qwen3");
  const cases: Array<[string, "cross_entropy" | "importance_sampling" | "ppo" | "cispo" | "dro", Record<string, number> | undefined, boolean]> = [
    ["cross_entropy", "cross_entropy", undefined, false],
    ["importance_sampling", "importance_sampling", undefined, false],
    ["importance_sampling with a weights mask", "importance_sampling", undefined, true],
    ["ppo (default 0.8/1.2, tokens clipped on both sides)", "ppo", undefined, false],
    ["ppo with custom thresholds and weights", "ppo", { clip_low_threshold: 0.5, clip_high_threshold: 1.5 }, true],
    ["dro (beta 0.3)", "dro", { beta: 0.3 }, false],
  ];
  for (const [name, loss, cfg, weights] of cases) {
    it(name, () => {
      const model = makeModel64(config, LORA_ALL);
      randomizeTrainable(model, 9);
      let batch = inputsFor(tinyBatch(config, 4, [6, 4]), loss, weights);
      if (loss !== "cross_entropy") {
        const lps = model.forwardBackward(batch, loss, cfg, false).logprobs;
        batch = withSamplerOffsets(batch, lps);
        if (loss === "ppo" || loss === "cispo") {
          // The case must really contain clipped tokens (zero gradient for PPO) and unclipped ones.
          const resolved = resolveLoss(loss, cfg);
          let zero = 0;
          let nonzero = 0;
          batch.forEach((d, s) =>
            lps[s].forEach((lp, i) => {
              const t = tokenLoss(resolved, lp, { weight: 1, advantage: d.lossInputs.advantages[i], samplerLogprob: d.lossInputs.logprobs[i] });
              const ratio = Math.exp(lp - d.lossInputs.logprobs[i]);
              const clipped = ratio < resolved.clipLow || ratio > resolved.clipHigh;
              if (clipped) zero++;
              else nonzero++;
              if (loss === "ppo" && t.dlp === 0) assert.ok(clipped);
            }),
          );
          assert.ok(zero >= 2 && nonzero >= 2, `clipped ${zero}, unclipped ${nonzero}`);
        }
      }
      const checked = gradCheck(model, batch, { loss, lossConfig: cfg, entries: 1 });
      assert.equal(checked.length, model.parameters().length);
    });
  }
});

describe("cispo gradient (stop-gradient on the clipped ratio, so no plain finite difference)", () => {
  it("equals the cross-entropy gradient with weights clip(ratio)·A, which is finite-difference checked above", () => {
    const config = tinyConfig("llama");
    const cfg = { clip_high_threshold: 1.5 };
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 9);
    let batch = inputsFor(tinyBatch(config, 4, [6, 4]), "cispo");
    const lps = model.forwardBackward(batch, "cispo", cfg, false).logprobs;
    batch = withSamplerOffsets(batch, lps);
    model.zeroGrad();
    const out = model.forwardBackward(batch, "cispo", cfg, true);
    const cispoGrads = model.parameters().map((p) => Float64Array.from(p.grad ?? []));
    let clipped = 0;
    let expectedLoss = 0;
    const ceBatch: SequenceInput[] = batch.map((d, s) => ({
      inputTokens: d.inputTokens,
      lossInputs: {
        target_tokens: d.lossInputs.target_tokens,
        weights: Float32Array.from(lps[s], (lp, i) => {
          const ratio = Math.exp(lp - d.lossInputs.logprobs[i]);
          if (ratio > 1.5) clipped++;
          const w = Math.min(ratio, 1.5) * d.lossInputs.advantages[i];
          expectedLoss += -w * lp;
          return w;
        }),
      },
    }));
    assert.ok(clipped >= 2, `only ${clipped} clipped tokens`);
    assert.ok(Math.abs(out.lossSum - expectedLoss) < 1e-5 * Math.abs(expectedLoss));
    model.zeroGrad();
    model.forwardBackward(ceBatch, "cross_entropy", undefined, true);
    model.parameters().forEach((p, j) => {
      const g = p.grad ?? new Float64Array(0);
      let maxAbs = 0;
      for (let i = 0; i < g.length; i++) maxAbs = Math.max(maxAbs, Math.abs(g[i]));
      assert.ok(maxAbs > 1e-3, `${p.name}: no gradient`);
      for (let i = 0; i < g.length; i++) {
        // The CE weights went through float32 (the wire type), hence a float32-sized tolerance.
        assert.ok(Math.abs(g[i] - cispoGrads[j][i]) <= 1e-5 * maxAbs, `${p.name}[${i}]: ${cispoGrads[j][i]} vs ${g[i]}`);
      }
    });
  });
});
