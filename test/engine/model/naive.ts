// An independent, deliberately naive decoder forward (plain number arrays, per-token loops, no
// kernels, no packing) written straight from HF modeling_llama / qwen2 / qwen3 / olmo2 / gemma3 / smollm3 / phi3 / qwen3_5, to check the
// engine's forward against. One sequence at a time.
import type { ModelConfig } from "../../../src/engine/model/config.ts";

type Weights = Map<string, ArrayLike<number>>;

function get(w: Weights, name: string): ArrayLike<number> {
  const t = w.get(name);
  if (t === undefined) throw new Error(`naive: missing ${name}`);
  return t;
}

/** y = W x (+ b) with W [out, in]. */
function matvec(W: ArrayLike<number>, x: number[], out: number, bias?: ArrayLike<number>): number[] {
  const inDim = x.length;
  const y: number[] = [];
  for (let o = 0; o < out; o++) {
    let s = bias ? bias[o] : 0;
    for (let i = 0; i < inDim; i++) s += W[o * inDim + i] * x[i];
    y.push(s);
  }
  return y;
}

function rmsnorm(x: number[], w: ArrayLike<number>, eps: number): number[] {
  let ss = 0;
  for (const v of x) ss += v * v;
  const r = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * r * w[i]);
}

function invFreqs(c: ModelConfig, theta = c.ropeTheta): number[] {
  const d = c.rotaryDim ?? c.headDim;
  const out: number[] = [];
  for (let i = 0; i < d / 2; i++) {
    let f = Math.fround(1 / Math.fround(theta ** Math.fround((2 * i) / d)));
    const s = c.ropeScaling;
    if (s && s.type === "yarn") throw new Error("naive model: YaRN is not implemented here");
    if (s) {
      const wl = (2 * Math.PI) / f;
      const lowWl = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
      const highWl = s.originalMaxPositionEmbeddings / s.highFreqFactor;
      if (wl > lowWl) f = f / s.factor;
      else if (wl >= highWl) {
        const sm = (s.originalMaxPositionEmbeddings / wl - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
        f = (1 - sm) * (f / s.factor) + sm * f;
      }
      f = Math.fround(f);
    }
    out.push(f);
  }
  return out;
}

/** rotate_half RoPE on one head vector. */
function rotate(x: number[], pos: number, freqs: number[]): number[] {
  const half = x.length / 2;
  const y = x.slice();
  for (let i = 0; i < half; i++) {
    // torch forms the angle in fp32 (docs/numerics.md#rotary-embeddings).
    const a = Math.fround(pos * freqs[i]);
    y[i] = x[i] * Math.cos(a) - x[i + half] * Math.sin(a);
    y[i + half] = x[i + half] * Math.cos(a) + x[i] * Math.sin(a);
  }
  return y;
}

const silu = (z: number): number => z / (1 + Math.exp(-z));
const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** RoPE on the first `rotary` dims of a head (all of them unless the family rotates part). */
function rotatePartial(x: number[], pos: number, freqs: number[], rotary: number): number[] {
  return [...rotate(x.slice(0, rotary), pos, freqs), ...x.slice(rotary)];
}

/**
 * Qwen3.5's Gated DeltaNet over one sequence (modeling_qwen3_5's Qwen3_5GatedDeltaNet with the
 * recurrent delta rule), from the normed inputs of every token.
 */
function naiveDeltaNet(c: ModelConfig, w: Weights, pre: string, ns: number[][]): number[][] {
  const la = c.linearAttention;
  if (la === undefined) throw new Error("naive: no linear attention");
  const { numKeyHeads: Hk, numValueHeads: Hv, keyHeadDim: dk, valueHeadDim: dv, convKernel: K } = la;
  const Kd = Hk * dk;
  const C = 2 * Kd + Hv * dv;
  const p = `${pre}.linear_attn`;
  const mixed = ns.map((n) => matvec(get(w, `${p}.in_proj_qkv.weight`), n, C));
  const conv = get(w, `${p}.conv1d.weight`);
  const aLog = get(w, `${p}.A_log`);
  const dtBias = get(w, `${p}.dt_bias`);
  const S = Array.from({ length: Hv }, () => Array.from({ length: dk }, () => new Array<number>(dv).fill(0)));
  const l2 = (x: number[]): number[] => {
    const r = 1 / Math.sqrt(x.reduce((a, v) => a + v * v, 0) + 1e-6);
    return x.map((v) => v * r);
  };
  return ns.map((n, t) => {
    const act: number[] = [];
    for (let ch = 0; ch < C; ch++) {
      let acc = 0;
      for (let j = 0; j < K; j++) {
        const src = t - (K - 1) + j;
        if (src >= 0) acc += conv[ch * K + j] * mixed[src][ch];
      }
      act.push(silu(acc));
    }
    const z = matvec(get(w, `${p}.in_proj_z.weight`), n, Hv * dv);
    const b = matvec(get(w, `${p}.in_proj_b.weight`), n, Hv);
    const a = matvec(get(w, `${p}.in_proj_a.weight`), n, Hv);
    const y: number[] = [];
    for (let h = 0; h < Hv; h++) {
      const kh = Math.floor(h / (Hv / Hk));
      const q = l2(act.slice(kh * dk, (kh + 1) * dk)).map((v) => v / Math.sqrt(dk));
      const k = l2(act.slice(Kd + kh * dk, Kd + (kh + 1) * dk));
      const v = act.slice(2 * Kd + h * dv, 2 * Kd + (h + 1) * dv);
      const beta = sigmoid(b[h]);
      const x = a[h] + dtBias[h];
      const g = -Math.exp(aLog[h]) * (x > 20 ? x : Math.log1p(Math.exp(x)));
      const St = S[h];
      for (const row of St) for (let j = 0; j < dv; j++) row[j] *= Math.exp(g);
      const delta = v.map((vj, j) => beta * (vj - St.reduce((acc, row, i) => acc + row[j] * k[i], 0)));
      for (let i = 0; i < dk; i++) for (let j = 0; j < dv; j++) St[i][j] += k[i] * delta[j];
      const o = Array.from({ length: dv }, (_, j) => St.reduce((acc, row, i) => acc + row[j] * q[i], 0));
      const normed = rmsnorm(o, get(w, `${p}.norm.weight`), c.rmsNormEps);
      for (let j = 0; j < dv; j++) y.push(normed[j] * silu(z[h * dv + j]));
    }
    return matvec(get(w, `${p}.out_proj.weight`), y, c.hiddenSize);
  });
}
const geluTanh = (z: number): number => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3)));

/** Phi-3's fused qkv_proj / gate_up_proj split into the separate matrices the naive forward reads. */
function unfused(c: ModelConfig, w: Weights): Weights {
  if (c.fusedProjections !== true) return w;
  const out = new Map(w);
  const { hiddenSize: D, numHeads: H, numKvHeads: Hkv, headDim: d, intermediateSize: F } = c;
  const split = (name: string, parts: Array<[string, number]>): void => {
    const fusedW = get(w, `${name}.weight`);
    let r0 = 0;
    for (const [part, rows] of parts) {
      out.set(
        part,
        Array.from({ length: rows * D }, (_, i) => fusedW[r0 * D + i]),
      );
      r0 += rows;
    }
  };
  for (let l = 0; l < c.numLayers; l++) {
    const a = `model.layers.${l}.self_attn`;
    const m = `model.layers.${l}.mlp`;
    split(`${a}.qkv_proj`, [
      [`${a}.q_proj.weight`, H * d],
      [`${a}.k_proj.weight`, Hkv * d],
      [`${a}.v_proj.weight`, Hkv * d],
    ]);
    split(`${m}.gate_up_proj`, [
      [`${m}.gate_proj.weight`, F],
      [`${m}.up_proj.weight`, F],
    ]);
  }
  return out;
}

/** Logits [N][V] for one sequence. */
export function naiveLogits(c: ModelConfig, fusedWeights: Weights, tokens: number[]): number[][] {
  const w = unfused(c, fusedWeights);
  const { hiddenSize: D, numHeads: H, numKvHeads: Hkv, headDim: d, rmsNormEps: eps } = c;
  const embed = get(w, "model.embed_tokens.weight");
  // Gemma: norms scale by (1 + w), embeddings by sqrt(D), GELU-tanh MLP, sandwich norms, sliding layers.
  const gemma = c.normOffset === true;
  const nw = (name: string): ArrayLike<number> => {
    const t = get(w, name);
    return gemma ? Array.from(t, (x) => 1 + x) : t;
  };
  const embedScale = c.embedScale ?? 1;
  let xs: number[][] = tokens.map((t) => Array.from({ length: D }, (_, j) => embed[t * D + j] * embedScale));
  for (let l = 0; l < c.numLayers; l++) {
    const pre = `model.layers.${l}`;
    const sliding = c.slidingLayers?.[l] === true;
    const freqs = invFreqs(c, sliding && c.ropeThetaLocal !== undefined ? c.ropeThetaLocal : c.ropeTheta);
    const window = sliding ? (c.slidingWindow as number) : Infinity;
    const scale = 1 / Math.sqrt(c.queryPreAttnScalar ?? d);
    const bias = (p: string): ArrayLike<number> | undefined => w.get(`${pre}.self_attn.${p}.bias`);
    const qs: number[][][] = [];
    const ks: number[][][] = [];
    const vs: number[][][] = [];
    // olmo2: no input norms; each block's output is normed before the residual add.
    const post = c.normPlacement === "post";
    const sandwich = c.normPlacement === "sandwich";
    const wholeQk = c.qkNormScope === "projection";
    if (c.linearAttention?.layers[l] === true) {
      const mixedOut = naiveDeltaNet(
        c,
        w,
        pre,
        xs.map((x) => rmsnorm(x, nw(`${pre}.input_layernorm.weight`), eps)),
      );
      xs = xs.map((x, t) => {
        const hres = x.map((v, i) => v + mixedOut[t][i]);
        const n2 = rmsnorm(hres, nw(`${pre}.post_attention_layernorm.weight`), eps);
        const gate = matvec(get(w, `${pre}.mlp.gate_proj.weight`), n2, c.intermediateSize);
        const up = matvec(get(w, `${pre}.mlp.up_proj.weight`), n2, c.intermediateSize);
        const down = matvec(
          get(w, `${pre}.mlp.down_proj.weight`),
          gate.map((g, i) => silu(g) * up[i]),
          D,
        );
        return hres.map((v, i) => v + down[i]);
      });
      continue;
    }
    const gates: number[][] = [];
    const rotary = c.rotaryDim ?? d;
    for (let t = 0; t < xs.length; t++) {
      const n = post ? xs[t] : rmsnorm(xs[t], nw(`${pre}.input_layernorm.weight`), eps);
      let q = matvec(get(w, `${pre}.self_attn.q_proj.weight`), n, (c.attnOutputGate === true ? 2 : 1) * H * d, bias("q_proj"));
      if (c.attnOutputGate === true) {
        // Qwen3.5: each head's rows are its query, then its output gate.
        gates.push(Array.from({ length: H * d }, (_, i) => q[2 * Math.floor(i / d) * d + d + (i % d)]));
        q = Array.from({ length: H * d }, (_, i) => q[2 * Math.floor(i / d) * d + (i % d)]);
      }
      let k = matvec(get(w, `${pre}.self_attn.k_proj.weight`), n, Hkv * d, bias("k_proj"));
      const v = matvec(get(w, `${pre}.self_attn.v_proj.weight`), n, Hkv * d, bias("v_proj"));
      if (c.qkNorm && wholeQk) {
        q = rmsnorm(q, get(w, `${pre}.self_attn.q_norm.weight`), eps);
        k = rmsnorm(k, get(w, `${pre}.self_attn.k_norm.weight`), eps);
      }
      const heads = (vec: number[], nh: number, norm: string): number[][] =>
        Array.from({ length: nh }, (_, h) => {
          let hv = vec.slice(h * d, (h + 1) * d);
          if (c.qkNorm && !wholeQk) hv = rmsnorm(hv, nw(`${pre}.self_attn.${norm}.weight`), eps);
          return hv;
        });
      const rope = c.ropeLayers?.[l] !== false;
      qs.push(heads(q, H, "q_norm").map((hv) => (rope ? rotatePartial(hv, t, freqs, rotary) : hv)));
      ks.push(heads(k, Hkv, "k_norm").map((hv) => (rope ? rotatePartial(hv, t, freqs, rotary) : hv)));
      vs.push(Array.from({ length: Hkv }, (_, h) => v.slice(h * d, (h + 1) * d)));
    }
    const next: number[][] = [];
    for (let t = 0; t < xs.length; t++) {
      const attnOut: number[] = [];
      for (let h = 0; h < H; h++) {
        const g = Math.floor(h / (H / Hkv));
        const scores: number[] = [];
        for (let j = 0; j <= t; j++) {
          let s = 0;
          for (let e = 0; e < d; e++) s += qs[t][h][e] * ks[j][g][e];
          scores.push(t - j < window ? s * scale : -Infinity);
        }
        const mx = Math.max(...scores);
        const ex = scores.map((s) => Math.exp(s - mx));
        const sum = ex.reduce((a, b) => a + b, 0);
        for (let e = 0; e < d; e++) {
          let o = 0;
          for (let j = 0; j <= t; j++) o += (ex[j] / sum) * vs[j][g][e];
          attnOut.push(o);
        }
      }
      const gated = c.attnOutputGate === true ? attnOut.map((v, i) => v * sigmoid(gates[t][i])) : attnOut;
      let o = matvec(get(w, `${pre}.self_attn.o_proj.weight`), gated, D, bias("o_proj"));
      if (post || sandwich) o = rmsnorm(o, nw(`${pre}.post_attention_layernorm.weight`), eps);
      const hres = xs[t].map((v, i) => v + o[i]);
      const mlpNorm = sandwich ? "pre_feedforward_layernorm" : "post_attention_layernorm";
      const n2 = post ? hres : rmsnorm(hres, nw(`${pre}.${mlpNorm}.weight`), eps);
      const gate = matvec(get(w, `${pre}.mlp.gate_proj.weight`), n2, c.intermediateSize);
      const up = matvec(get(w, `${pre}.mlp.up_proj.weight`), n2, c.intermediateSize);
      const act = gate.map((g, i) => (c.hiddenAct === "gelu_tanh" ? geluTanh(g) : silu(g)) * up[i]);
      let down = matvec(get(w, `${pre}.mlp.down_proj.weight`), act, D);
      if (post || sandwich) down = rmsnorm(down, nw(`${pre}.post_feedforward_layernorm.weight`), eps);
      next.push(hres.map((v, i) => v + down[i]));
    }
    xs = next;
  }
  const headW = c.tieWordEmbeddings ? embed : get(w, "lm_head.weight");
  return xs.map((x) => matvec(headW, rmsnorm(x, nw("model.norm.weight"), eps), c.vocabSize));
}

export function logSoftmaxAt(logits: number[], target: number): number {
  const mx = Math.max(...logits);
  let s = 0;
  for (const z of logits) s += Math.exp(z - mx);
  return logits[target] - mx - Math.log(s);
}

/** W + (alpha/r) B A for every adapter in a PEFT-named map, on a copy of the HF weights. */
export function mergeLora(base: Weights, adapters: Map<string, ArrayLike<number>>, rank: number, alpha = 32): Map<string, Float64Array> {
  const out = new Map<string, Float64Array>();
  for (const [k, v] of base) out.set(k, Float64Array.from(v));
  const prefix = "base_model.model.";
  for (const [name, A] of adapters) {
    if (!name.endsWith(".lora_A.weight")) continue;
    const module = name.slice(prefix.length, -".lora_A.weight".length);
    const B = adapters.get(`${prefix}${module}.lora_B.weight`);
    if (B === undefined) throw new Error(`naive: no lora_B for ${module}`);
    const target = out.get(`${module}.weight`) ?? (module === "lm_head" ? out.get("model.embed_tokens.weight") : undefined);
    if (target === undefined) throw new Error(`naive: no base weight for ${module}`);
    const inDim = A.length / rank;
    const outDim = B.length / rank;
    const merged = Float64Array.from(target);
    for (let o = 0; o < outDim; o++) {
      for (let i = 0; i < inDim; i++) {
        let s = 0;
        for (let r = 0; r < rank; r++) s += B[o * rank + r] * A[r * inDim + i];
        merged[o * inDim + i] += (alpha / rank) * s;
      }
    }
    // A tied head adapter must only change the output projection, so it gets its own head matrix.
    out.set(module === "lm_head" ? "lm_head.weight" : `${module}.weight`, merged);
  }
  return out;
}
