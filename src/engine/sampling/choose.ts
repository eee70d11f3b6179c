// Picking the next token from one row of logits (docs/numerics.md#sampling-order-of-operations, docs/numerics.md#returned-logprobs). At temperature 0
// the argmax (lowest id on ties) with the raw log-softmax as its logprob. Otherwise z' = z / T,
// top-k keeps the k largest, top-p keeps, in descending order, every token whose exclusive
// cumulative probability (renormalised over what top-k kept) is below p and always the first;
// a token is drawn from softmax(z') over what is kept, with one uniform number u. The returned
// logprob is log_softmax(z / T)[token] over the whole vocabulary, without the truncation's
// renormalisation (what Tinker returns, as far as can be established: docs/numerics.md#returned-logprobs).

export interface ChooseParams {
  temperature: number;
  /** Values < 1 mean no limit. */
  topK: number;
  /** 1 means no limit. */
  topP: number;
}

export interface Chosen {
  token: number;
  logprob: number;
}

function logSumExp(z: Float32Array, invT: number): number {
  let max = -Infinity;
  for (let i = 0; i < z.length; i++) if (z[i] > max) max = z[i];
  if (max === -Infinity) return -Infinity;
  const m = max * invT;
  let s = 0;
  for (let i = 0; i < z.length; i++) s += Math.exp(z[i] * invT - m);
  return m + Math.log(s);
}

function argmax(z: Float32Array): number {
  let best = 0;
  for (let i = 1; i < z.length; i++) if (z[i] > z[best]) best = i;
  return best;
}

/** Ids of the k largest entries of z, in descending order (ties: lower id first). */
function topKIds(z: Float32Array, k: number): number[] {
  // A min-heap of the best k seen so far; "worse" = smaller value, or equal value and higher id.
  const heap: number[] = [];
  const worse = (a: number, b: number): boolean => z[a] < z[b] || (z[a] === z[b] && a > b);
  const siftDown = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l], heap[m])) m = l;
      if (r < heap.length && worse(heap[r], heap[m])) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  for (let id = 0; id < z.length; id++) {
    if (heap.length < k) {
      heap.push(id);
      for (let i = heap.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i], heap[parent])) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (worse(heap[0], id)) {
      heap[0] = id;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => z[b] - z[a] || a - b);
}

// exp(z/T - max) per token, reused between calls (one worker thread, one call at a time).
let weightsBuf = new Float64Array(0);

/** Fills weightsBuf with exp(z_i / T - max) and returns their sum and the max of z / T. */
function softmaxWeights(z: Float32Array, invT: number): { sum: number; max: number } {
  if (weightsBuf.length < z.length) weightsBuf = new Float64Array(z.length);
  let max = -Infinity;
  for (let i = 0; i < z.length; i++) if (z[i] > max) max = z[i];
  const m = max * invT;
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    const e = Math.exp(z[i] * invT - m);
    weightsBuf[i] = e;
    sum += e;
  }
  return { sum, max: m };
}

const BUCKETS_PER_NAT = 64;
const BUCKETS = 64 * BUCKETS_PER_NAT;

/**
 * Top-p over the whole vocabulary on weights w (sum `total`): tokens bucketed by log-probability;
 * buckets entirely above the one where the cumulative mass reaches p are kept whole, buckets
 * below it dropped, and only the crossing bucket is sorted. Returns the kept ids.
 */
function topPIds(z: Float32Array, w: Float64Array, total: number, p: number): number[] {
  const V = z.length;
  const bucketOf = new Int32Array(V);
  const mass = new Float64Array(BUCKETS);
  const logTotal = Math.log(total);
  for (let i = 0; i < V; i++) {
    const lp = Math.log(w[i]) - logTotal;
    const b = Math.min(BUCKETS - 1, Math.floor(-lp * BUCKETS_PER_NAT));
    bucketOf[i] = b;
    mass[b] += w[i];
  }
  let above = 0;
  let cross = 0;
  while (cross < BUCKETS - 1 && (above + mass[cross]) / total < p) above += mass[cross++];
  let count = 0;
  const tie: number[] = [];
  for (let i = 0; i < V; i++) {
    if (bucketOf[i] < cross) count++;
    else if (bucketOf[i] === cross) tie.push(i);
  }
  tie.sort((a, b) => z[b] - z[a] || a - b);
  const keepTie = new Set<number>();
  for (const id of tie) {
    if (count > 0 && above / total >= p) break;
    keepTie.add(id);
    count++;
    above += w[id];
  }
  const kept: number[] = [];
  for (let i = 0; i < V; i++) if (bucketOf[i] < cross || keepTie.has(i)) kept.push(i);
  return kept;
}

/**
 * The kept candidates (top-k in descending order; top-p alone in id order), or null when nothing
 * is truncated (the whole vocabulary, in id order, is the support).
 */
export function support(z: Float32Array, params: ChooseParams): number[] | null {
  const V = z.length;
  const invT = 1 / params.temperature;
  const useK = params.topK >= 1 && params.topK < V;
  const useP = params.topP < 1;
  if (!useK && !useP) return null;
  if (!useK) {
    const { sum } = softmaxWeights(z, invT);
    return topPIds(z, weightsBuf, sum, params.topP);
  }
  const ids = topKIds(z, params.topK);
  if (!useP) return ids;
  // top-p over what top-k kept, renormalised.
  const m = z[ids[0]] * invT;
  const w = ids.map((id) => Math.exp(z[id] * invT - m));
  let total = 0;
  for (const x of w) total += x;
  let before = 0;
  let keep = 0;
  while (keep < ids.length && (keep === 0 || before / total < params.topP)) before += w[keep++];
  return ids.slice(0, keep);
}

/** Chooses a token from logits row z with the uniform draw u in [0, 1). */
export function chooseToken(z: Float32Array, params: ChooseParams, u: number): Chosen {
  if (params.temperature === 0) {
    const token = argmax(z);
    return { token, logprob: z[token] - logSumExp(z, 1) };
  }
  const invT = 1 / params.temperature;
  const kept = support(z, params);
  // support() may have used the buffer; the weights are recomputed for this temperature.
  const { sum, max } = softmaxWeights(z, invT);
  const lse = max + Math.log(sum);
  const w = weightsBuf;
  let token = -1;
  if (kept === null) {
    // Walk the CDF; rounding can leave the total a hair below u·sum, so the last token with
    // nonzero weight is the fallback.
    const target = u * sum;
    let acc = 0;
    let last = 0;
    for (let i = 0; i < z.length; i++) {
      if (w[i] > 0) last = i;
      acc += w[i];
      if (acc > target) {
        token = i;
        break;
      }
    }
    if (token < 0) token = last;
  } else {
    let total = 0;
    for (const id of kept) total += w[id];
    const target = u * total;
    let acc = 0;
    for (const id of kept) {
      acc += w[id];
      if (acc > target) {
        token = id;
        break;
      }
    }
    if (token < 0) token = kept[kept.length - 1];
  }
  return { token, logprob: z[token] * invT - lse };
}

/** log_softmax(z)[target] (temperature 1), for prompt logprobs. */
export function rawLogprob(z: Float32Array, target: number): number {
  return z[target] - logSumExp(z, 1);
}

/** The k most likely tokens of z with their raw logprobs, descending. */
export function topLogprobs(z: Float32Array, k: number): [number, number][] {
  const lse = logSumExp(z, 1);
  return topKIds(z, Math.min(k, z.length)).map((id) => [id, z[id] - lse]);
}
