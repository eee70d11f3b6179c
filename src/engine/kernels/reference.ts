// Plain TypeScript kernels: the oracle for tests and the fallback when the native addon is missing.
// They take Float32Array or Float64Array. Arithmetic happens in JS numbers (float64) and is rounded
// only when stored, so float64 inputs give float64-exact results for finite-difference checks.
// Hot loops keep typed arrays in locals (V8 optimises those far better than property lookups).

import type { FloatArray, Kernels } from "./types.ts";
import { kvValues, referenceDecodeKernels, type KvArray } from "./decodeTypes.ts";
import { HalfArray, type WeightArray } from "./halfArray.ts";

// One reusable float64 scratch buffer; kernels are synchronous, so sharing it is safe.
let scratch = new Float64Array(1024);
function getScratch(n: number): Float64Array {
  if (scratch.length < n) scratch = new Float64Array(Math.max(n, scratch.length * 2));
  return scratch;
}

// Packed copies of op(A) (rows contiguous in k) and op(B) (columns contiguous in k) for gemm.
let packA = new Float64Array(1024);
let packB = new Float64Array(1024);

function gemm(
  transA: boolean,
  transB: boolean,
  M: number,
  N: number,
  K: number,
  alpha: number,
  A: FloatArray,
  Bw: WeightArray,
  beta: number,
  C: FloatArray,
): void {
  if (A.length < M * K || Bw.length < K * N || C.length < M * N) {
    throw new Error(
      `gemm: arrays too short for M=${M}, N=${N}, K=${K}: A has ${A.length} (needs ${M * K}), B has ${Bw.length} (needs ${K * N}), C has ${C.length} (needs ${M * N})`,
    );
  }
  // 16-bit weights: the product of their (exactly) widened values.
  const B = Bw instanceof HalfArray ? Bw.widen(0, K * N) : Bw;
  if (packA.length < M * K) packA = new Float64Array(Math.max(M * K, packA.length * 2));
  if (packB.length < N * K) packB = new Float64Array(Math.max(N * K, packB.length * 2));
  const ap = packA;
  const bp = packB;
  if (!transA) ap.set(A.subarray(0, M * K));
  else for (let k = 0; k < K; k++) for (let i = 0; i < M; i++) ap[i * K + k] = A[k * M + i];
  if (transB) bp.set(B.subarray(0, N * K));
  else for (let k = 0; k < K; k++) for (let j = 0; j < N; j++) bp[j * K + k] = B[k * N + j];
  // 4x4 blocks of C with the 16 sums in locals (V8 keeps them in registers), then the edges.
  const M4 = M - (M % 4);
  const N4 = N - (N % 4);
  for (let i = 0; i < M4; i += 4) {
    const a0 = i * K,
      a1 = a0 + K,
      a2 = a1 + K,
      a3 = a2 + K;
    for (let j = 0; j < N4; j += 4) {
      const b0 = j * K,
        b1 = b0 + K,
        b2 = b1 + K,
        b3 = b2 + K;
      let s00 = 0,
        s01 = 0,
        s02 = 0,
        s03 = 0,
        s10 = 0,
        s11 = 0,
        s12 = 0,
        s13 = 0;
      let s20 = 0,
        s21 = 0,
        s22 = 0,
        s23 = 0,
        s30 = 0,
        s31 = 0,
        s32 = 0,
        s33 = 0;
      for (let k = 0; k < K; k++) {
        const x0 = ap[a0 + k],
          x1 = ap[a1 + k],
          x2 = ap[a2 + k],
          x3 = ap[a3 + k];
        const y0 = bp[b0 + k],
          y1 = bp[b1 + k],
          y2 = bp[b2 + k],
          y3 = bp[b3 + k];
        s00 += x0 * y0;
        s01 += x0 * y1;
        s02 += x0 * y2;
        s03 += x0 * y3;
        s10 += x1 * y0;
        s11 += x1 * y1;
        s12 += x1 * y2;
        s13 += x1 * y3;
        s20 += x2 * y0;
        s21 += x2 * y1;
        s22 += x2 * y2;
        s23 += x2 * y3;
        s30 += x3 * y0;
        s31 += x3 * y1;
        s32 += x3 * y2;
        s33 += x3 * y3;
      }
      storeC(C, i * N + j, alpha, beta, s00, s01, s02, s03);
      storeC(C, (i + 1) * N + j, alpha, beta, s10, s11, s12, s13);
      storeC(C, (i + 2) * N + j, alpha, beta, s20, s21, s22, s23);
      storeC(C, (i + 3) * N + j, alpha, beta, s30, s31, s32, s33);
    }
  }
  // Edges: rows past M4 (all columns) and columns past N4 (rows below M4).
  for (let i = 0; i < M; i++) {
    for (let j = i < M4 ? N4 : 0; j < N; j++) {
      const ao = i * K;
      const bo = j * K;
      let s = 0;
      for (let k = 0; k < K; k++) s += ap[ao + k] * bp[bo + k];
      const o = i * N + j;
      C[o] = beta === 0 ? alpha * s : alpha * s + beta * C[o];
    }
  }
}

function storeC(C: FloatArray, o: number, alpha: number, beta: number, s0: number, s1: number, s2: number, s3: number): void {
  if (beta === 0) {
    C[o] = alpha * s0;
    C[o + 1] = alpha * s1;
    C[o + 2] = alpha * s2;
    C[o + 3] = alpha * s3;
  } else {
    C[o] = alpha * s0 + beta * C[o];
    C[o + 1] = alpha * s1 + beta * C[o + 1];
    C[o + 2] = alpha * s2 + beta * C[o + 2];
    C[o + 3] = alpha * s3 + beta * C[o + 3];
  }
}

function rmsnormForward(x: FloatArray, weight: FloatArray, out: FloatArray, rstd: FloatArray, rows: number, dim: number, eps: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let ss = 0;
    for (let j = 0; j < dim; j++) ss += x[o + j] * x[o + j];
    const rs = 1 / Math.sqrt(ss / dim + eps);
    rstd[r] = rs;
    for (let j = 0; j < dim; j++) out[o + j] = x[o + j] * rs * weight[j];
  }
}

function rmsnormBackward(
  dout: FloatArray,
  x: FloatArray,
  weight: FloatArray,
  rstd: FloatArray,
  dx: FloatArray,
  dweight: FloatArray | null,
  rows: number,
  dim: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    // Use the stored (possibly float32-rounded) rstd so forward and backward agree.
    const rs = rstd[r];
    let dot = 0;
    for (let j = 0; j < dim; j++) dot += weight[j] * dout[o + j] * x[o + j];
    const c = (rs * rs * rs * dot) / dim;
    for (let j = 0; j < dim; j++) dx[o + j] = rs * weight[j] * dout[o + j] - c * x[o + j];
    if (dweight !== null) for (let j = 0; j < dim; j++) dweight[j] += dout[o + j] * x[o + j] * rs;
  }
}

function rope(x: FloatArray, positions: Int32Array, invFreq: FloatArray, tokens: number, nHeads: number, headDim: number, inverse: boolean): void {
  const half = headDim >> 1;
  const cs = getScratch(2 * half);
  // torch forms the angle in fp32 whatever the dtype; matching that matters at long positions
  // (docs/numerics.md#rotary-embeddings). The rotation stays exactly orthogonal, so float64 gradient checks hold.
  const width = nHeads * headDim;
  for (let t = 0; t < tokens; t++) {
    const p = positions[t];
    for (let i = 0; i < half; i++) {
      const a = Math.fround(p * invFreq[i]);
      cs[i] = Math.cos(a);
      cs[half + i] = inverse ? -Math.sin(a) : Math.sin(a);
    }
    for (let h = 0; h < nHeads; h++) {
      const o = t * width + h * headDim;
      for (let i = 0; i < half; i++) {
        const c = cs[i];
        const s = cs[half + i];
        const x1 = x[o + i];
        const x2 = x[o + half + i];
        x[o + i] = x1 * c - x2 * s;
        x[o + half + i] = x2 * c + x1 * s;
      }
    }
  }
}

function checkSeqStarts(seqStarts: Int32Array): void {
  if (seqStarts.length < 1 || seqStarts[0] !== 0)
    throw new Error(`attention: seqStarts must start with 0, got [${Array.from(seqStarts.subarray(0, 4)).join(", ")}…]`);
  for (let s = 1; s < seqStarts.length; s++) {
    if (seqStarts[s] < seqStarts[s - 1])
      throw new Error(`attention: seqStarts must be non-decreasing, but seqStarts[${s}] = ${seqStarts[s]} < seqStarts[${s - 1}] = ${seqStarts[s - 1]}`);
  }
}

function checkHeads(nHeads: number, nKvHeads: number): number {
  if (nKvHeads <= 0 || nHeads % nKvHeads !== 0) throw new Error(`attention: nHeads (${nHeads}) must be a positive multiple of nKvHeads (${nKvHeads})`);
  return nHeads / nKvHeads;
}

function attentionForward(
  q: FloatArray,
  k: FloatArray,
  v: FloatArray,
  out: FloatArray,
  probs: FloatArray | null,
  seqStarts: Int32Array,
  nHeads: number,
  nKvHeads: number,
  headDim: number,
  scale: number,
  window = 0,
  sinks: FloatArray | null = null,
): void {
  checkSeqStarts(seqStarts);
  const rep = checkHeads(nHeads, nKvHeads);
  const qw = nHeads * headDim;
  const kw = nKvHeads * headDim;
  const numSeqs = seqStarts.length - 1;
  let maxLen = 0;
  for (let s = 0; s < numSeqs; s++) maxLen = Math.max(maxLen, seqStarts[s + 1] - seqStarts[s]);
  const acc = getScratch(maxLen + headDim);
  let probsBase = 0;
  for (let s = 0; s < numSeqs; s++) {
    const start = seqStarts[s];
    const len = seqStarts[s + 1] - start;
    for (let h = 0; h < nHeads; h++) {
      const g = Math.floor(h / rep);
      const pOff = probsBase + h * len * len;
      for (let i = 0; i < len; i++) {
        const qo = (start + i) * qw + h * headDim;
        // A sliding window keeps the last `window` keys (j > i - window); the rest weigh 0.
        const lo = window > 0 ? Math.max(0, i - window + 1) : 0;
        let mx = -Infinity;
        for (let j = lo; j <= i; j++) {
          const ko = (start + j) * kw + g * headDim;
          let sc = 0;
          for (let e = 0; e < headDim; e++) sc += q[qo + e] * k[ko + e];
          sc *= scale;
          acc[j] = sc;
          if (sc > mx) mx = sc;
        }
        // A sink joins the max (as transformers subtracts the max over scores and sink) and the sum.
        if (sinks !== null && sinks[h] > mx) mx = sinks[h];
        let sum = sinks === null ? 0 : Math.exp(sinks[h] - mx);
        for (let j = lo; j <= i; j++) {
          const ex = Math.exp(acc[j] - mx);
          acc[j] = ex;
          sum += ex;
        }
        const inv = 1 / sum;
        // acc[maxLen ..] accumulates the output row.
        acc.fill(0, maxLen, maxLen + headDim);
        for (let j = lo; j <= i; j++) {
          const p = acc[j] * inv;
          acc[j] = p;
          const vo = (start + j) * kw + g * headDim;
          for (let e = 0; e < headDim; e++) acc[maxLen + e] += p * v[vo + e];
        }
        for (let e = 0; e < headDim; e++) out[qo + e] = acc[maxLen + e];
        if (probs !== null) {
          const row = pOff + i * len;
          for (let j = 0; j < lo; j++) probs[row + j] = 0;
          for (let j = lo; j <= i; j++) probs[row + j] = acc[j];
          for (let j = i + 1; j < len; j++) probs[row + j] = 0;
        }
      }
    }
    probsBase += nHeads * len * len;
  }
}

function attentionBackward(
  dout: FloatArray,
  q: FloatArray,
  k: FloatArray,
  v: FloatArray,
  probs: FloatArray,
  dq: FloatArray,
  dk: FloatArray,
  dv: FloatArray,
  seqStarts: Int32Array,
  nHeads: number,
  nKvHeads: number,
  headDim: number,
  scale: number,
  dsinks: FloatArray | null = null,
): void {
  checkSeqStarts(seqStarts);
  const rep = checkHeads(nHeads, nKvHeads);
  const qw = nHeads * headDim;
  const kw = nKvHeads * headDim;
  const numSeqs = seqStarts.length - 1;
  const total = seqStarts[numSeqs];
  dq.fill(0, 0, total * qw);
  dk.fill(0, 0, total * kw);
  dv.fill(0, 0, total * kw);
  let maxLen = 0;
  for (let s = 0; s < numSeqs; s++) maxLen = Math.max(maxLen, seqStarts[s + 1] - seqStarts[s]);
  const dp = getScratch(maxLen);
  let probsBase = 0;
  for (let s = 0; s < numSeqs; s++) {
    const start = seqStarts[s];
    const len = seqStarts[s + 1] - start;
    for (let h = 0; h < nHeads; h++) {
      const g = Math.floor(h / rep);
      const pOff = probsBase + h * len * len;
      for (let i = 0; i < len; i++) {
        const qo = (start + i) * qw + h * headDim;
        const row = pOff + i * len;
        let rowsum = 0;
        let psum = 0;
        for (let j = 0; j <= i; j++) {
          const vo = (start + j) * kw + g * headDim;
          const p = probs[row + j];
          let d = 0;
          for (let e = 0; e < headDim; e++) {
            d += dout[qo + e] * v[vo + e];
            dv[vo + e] += p * dout[qo + e];
          }
          dp[j] = d;
          rowsum += p * d;
          psum += p;
        }
        if (dsinks !== null) dsinks[h] -= (1 - psum) * rowsum;
        for (let j = 0; j <= i; j++) {
          const ds = probs[row + j] * (dp[j] - rowsum) * scale;
          if (ds === 0) continue;
          const ko = (start + j) * kw + g * headDim;
          for (let e = 0; e < headDim; e++) {
            dq[qo + e] += ds * k[ko + e];
            dk[ko + e] += ds * q[qo + e];
          }
        }
      }
    }
    probsBase += nHeads * len * len;
  }
}

function decode(
  kernel: string,
  q: FloatArray,
  kCache: FloatArray,
  vCache: FloatArray,
  out: FloatArray,
  cacheSlots: Int32Array,
  cacheLens: Int32Array,
  n: number,
  nHeads: number,
  nKvHeads: number,
  headDim: number,
  maxLen: number,
  scale: number,
  window: number,
  sinks: FloatArray | null,
  prefixSlots: Int32Array | null = null,
  prefixLens: Int32Array | null = null,
): void {
  const rep = checkHeads(nHeads, nKvHeads);
  const qw = nHeads * headDim;
  const slotSize = nKvHeads * maxLen * headDim;
  const numSlots = Math.floor(kCache.length / slotSize);
  const acc = getScratch(maxLen + headDim);
  for (let b = 0; b < n; b++) {
    const len = cacheLens[b];
    const slot = cacheSlots[b];
    if (!(len >= 1 && len <= maxLen)) throw new Error(`${kernel}: cacheLens[${b}] = ${len} must be in 1..maxLen (${maxLen})`);
    if (!(slot >= 0 && slot < numSlots)) throw new Error(`${kernel}: cacheSlots[${b}] = ${slot} is outside 0..${numSlots - 1}`);
    // Positions below `shared` are read from the prefix slot (a prompt shared by several samples).
    const shared = prefixSlots !== null && prefixLens !== null ? prefixLens[b] : 0;
    const pslot = shared > 0 && prefixSlots !== null ? prefixSlots[b] : slot;
    if (!(shared >= 0 && shared <= len)) throw new Error(`${kernel}: prefixLens[${b}] = ${shared} must be in 0..cacheLens[${b}] (${len})`);
    if (!(pslot >= 0 && pslot < numSlots)) throw new Error(`${kernel}: prefixSlots[${b}] = ${pslot} is outside 0..${numSlots - 1}`);
    for (let h = 0; h < nHeads; h++) {
      const g = Math.floor(h / rep);
      const ownBase = slot * slotSize + g * maxLen * headDim;
      const prefixBase = pslot * slotSize + g * maxLen * headDim;
      const qo = b * qw + h * headDim;
      const lo = window > 0 ? Math.max(0, len - window) : 0;
      let mx = -Infinity;
      for (let j = lo; j < len; j++) {
        const ko = (j < shared ? prefixBase : ownBase) + j * headDim;
        let sc = 0;
        for (let e = 0; e < headDim; e++) sc += q[qo + e] * kCache[ko + e];
        sc *= scale;
        acc[j] = sc;
        if (sc > mx) mx = sc;
      }
      if (sinks !== null && sinks[h] > mx) mx = sinks[h];
      let sum = sinks === null ? 0 : Math.exp(sinks[h] - mx);
      for (let j = lo; j < len; j++) {
        const ex = Math.exp(acc[j] - mx);
        acc[j] = ex;
        sum += ex;
      }
      const inv = 1 / sum;
      acc.fill(0, maxLen, maxLen + headDim);
      for (let j = lo; j < len; j++) {
        const p = acc[j] * inv;
        const vo = (j < shared ? prefixBase : ownBase) + j * headDim;
        for (let e = 0; e < headDim; e++) acc[maxLen + e] += p * vCache[vo + e];
      }
      for (let e = 0; e < headDim; e++) out[qo + e] = acc[maxLen + e];
    }
  }
}

// Identity slot map for attentionDecode (query b reads slot b), grown on demand.
let identitySlots = new Int32Array(0);

function attentionDecode(
  q: FloatArray,
  kCache: FloatArray,
  vCache: FloatArray,
  out: FloatArray,
  cacheLens: Int32Array,
  n: number,
  nHeads: number,
  nKvHeads: number,
  headDim: number,
  maxLen: number,
  scale: number,
  window = 0,
  sinks: FloatArray | null = null,
): void {
  if (identitySlots.length < n) identitySlots = Int32Array.from({ length: Math.max(n, 2 * identitySlots.length) }, (_, i) => i);
  decode("attentionDecode", q, kCache, vCache, out, identitySlots, cacheLens, n, nHeads, nKvHeads, headDim, maxLen, scale, window, sinks);
}

function attentionDecodeSlots(
  q: FloatArray,
  kCache: KvArray,
  vCache: KvArray,
  out: FloatArray,
  cacheSlots: Int32Array,
  cacheLens: Int32Array,
  n: number,
  nHeads: number,
  nKvHeads: number,
  headDim: number,
  maxLen: number,
  scale: number,
  window = 0,
  sinks: FloatArray | null = null,
  prefixSlots: Int32Array | null = null,
  prefixLens: Int32Array | null = null,
): void {
  // An f16 cache is read as its widened values (a copy per call: the reference is for checking, not speed).
  decode(
    "attentionDecodeSlots",
    q,
    kvValues(kCache),
    kvValues(vCache),
    out,
    cacheSlots,
    cacheLens,
    n,
    nHeads,
    nKvHeads,
    headDim,
    maxLen,
    scale,
    window,
    sinks,
    prefixSlots,
    prefixLens,
  );
}

function swigluForward(gate: FloatArray, up: FloatArray, out: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    out[i] = (g / (1 + Math.exp(-g))) * up[i];
  }
}

function swigluBackward(dout: FloatArray, gate: FloatArray, up: FloatArray, dgate: FloatArray, dup: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    const s = 1 / (1 + Math.exp(-g));
    const d = dout[i];
    dgate[i] = d * up[i] * s * (1 + g * (1 - s));
    dup[i] = d * g * s;
  }
}

// GELU, tanh approximation (torch's gelu(approximate="tanh")): 0.5·g·(1 + tanh(c·(g + a·g³))).
const GELU_C = Math.sqrt(2 / Math.PI);
const GELU_A = 0.044715;

function gegluForward(gate: FloatArray, up: FloatArray, out: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    out[i] = 0.5 * g * (1 + Math.tanh(GELU_C * (g + GELU_A * g * g * g))) * up[i];
  }
}

function gegluBackward(dout: FloatArray, gate: FloatArray, up: FloatArray, dgate: FloatArray, dup: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    const t = Math.tanh(GELU_C * (g + GELU_A * g * g * g));
    const d = dout[i];
    dgate[i] = d * up[i] * (0.5 * (1 + t) + 0.5 * g * (1 - t * t) * GELU_C * (1 + 3 * GELU_A * g * g));
    dup[i] = d * 0.5 * g * (1 + t);
  }
}

function logprobsForward(logits: FloatArray, targets: Int32Array, logprobs: FloatArray, logsumexp: FloatArray, rows: number, vocab: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * vocab;
    let mx = -Infinity;
    for (let j = 0; j < vocab; j++) if (logits[o + j] > mx) mx = logits[o + j];
    let sum = 0;
    for (let j = 0; j < vocab; j++) sum += Math.exp(logits[o + j] - mx);
    const lse = mx + Math.log(sum);
    logsumexp[r] = lse;
    const t = targets[r];
    if (t >= vocab) throw new Error(`logprobsForward: targets[${r}] = ${t} is outside the vocabulary (size ${vocab})`);
    logprobs[r] = t < 0 ? 0 : logits[o + t] - lse;
  }
}

function logprobsBackward(
  dlogprobs: FloatArray,
  logits: FloatArray,
  targets: Int32Array,
  logsumexp: FloatArray,
  dlogits: FloatArray,
  rows: number,
  vocab: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * vocab;
    const t = targets[r];
    // A row without a target has the constant logprob 0, hence no gradient.
    if (t < 0) {
      dlogits.fill(0, o, o + vocab);
      continue;
    }
    const d = dlogprobs[r];
    const lse = logsumexp[r];
    for (let j = 0; j < vocab; j++) dlogits[o + j] = -d * Math.exp(logits[o + j] - lse);
    dlogits[o + t] += d;
  }
}

function adamw(
  param: FloatArray,
  grad: FloatArray,
  m: FloatArray,
  v: FloatArray,
  n: number,
  lr: number,
  beta1: number,
  beta2: number,
  eps: number,
  weightDecay: number,
  step: number,
  gradScale: number,
): void {
  const decay = 1 - lr * weightDecay;
  const stepSize = lr / (1 - beta1 ** step);
  const bc2Sqrt = Math.sqrt(1 - beta2 ** step);
  for (let i = 0; i < n; i++) {
    const g = grad[i] * gradScale;
    const mi = beta1 * m[i] + (1 - beta1) * g;
    const vi = beta2 * v[i] + (1 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    // Read back the stored moments so float32 runs follow what the next step will see.
    param[i] = param[i] * decay - (stepSize * m[i]) / (Math.sqrt(v[i]) / bc2Sqrt + eps);
  }
}

function axpy(n: number, alpha: number, x: FloatArray, y: FloatArray): void {
  for (let i = 0; i < n; i++) y[i] += alpha * x[i];
}

function sumSquares(x: FloatArray, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i] * x[i];
  return s;
}

function add(a: FloatArray, b: FloatArray, out: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) out[i] = a[i] + b[i];
}

function checkIds(kernel: string, ids: Int32Array, n: number, vocab: number): void {
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (!(id >= 0 && id < vocab)) throw new Error(`${kernel}: ids[${i}] = ${id} is outside the table (${vocab} rows)`);
  }
}

function embeddingForward(table: WeightArray, ids: Int32Array, out: FloatArray, n: number, dim: number): void {
  checkIds("embeddingForward", ids, n, Math.floor(table.length / dim));
  for (let i = 0; i < n; i++) {
    const src = ids[i] * dim;
    const row = table instanceof HalfArray ? table.widen(src, src + dim) : table.subarray(src, src + dim);
    out.set(row, i * dim);
  }
}

function embeddingBackward(dout: FloatArray, ids: Int32Array, dtable: FloatArray, n: number, dim: number): void {
  checkIds("embeddingBackward", ids, n, Math.floor(dtable.length / dim));
  for (let i = 0; i < n; i++) {
    const dst = ids[i] * dim;
    const src = i * dim;
    for (let j = 0; j < dim; j++) dtable[dst + j] += dout[src + j];
  }
}

export const referenceKernels: Kernels = {
  name: "reference",
  gemmBackend: "typescript",
  gemm,
  rmsnormForward,
  rmsnormBackward,
  rope,
  attentionForward,
  attentionBackward,
  attentionDecode,
  attentionDecodeSlots,
  swigluForward,
  swigluBackward,
  gegluForward,
  gegluBackward,
  logprobsForward,
  logprobsBackward,
  adamw,
  axpy,
  sumSquares,
  add,
  embeddingForward,
  embeddingBackward,
  ...referenceDecodeKernels(gemm),
};
