// Picking the next token from one row of logits (engine-numerics §7.2, §7.3). At temperature 0
// the argmax (lowest id on ties) with the raw log-softmax as its logprob. Otherwise z' = z / T,
// top-k keeps the k largest, top-p keeps, in descending order, every token whose exclusive
// cumulative probability (renormalised over what top-k kept) is below p and always the first;
// a token is drawn from softmax(z') over what is kept, with one uniform number u. The returned
// logprob is log_softmax(z / T)[token] over the whole vocabulary, without the truncation's
// renormalisation (what Tinker returns, as far as the spec could establish).

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
      for (let i = heap.length - 1; i > 0;) {
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
  return heap.sort((a, b) => (z[b] - z[a]) || a - b);
}

/**
 * The kept candidates in descending order, or null when nothing is truncated (the whole
 * vocabulary, in id order, is the support).
 */
export function support(z: Float32Array, params: ChooseParams): number[] | null {
  const V = z.length;
  const invT = 1 / params.temperature;
  const useK = params.topK >= 1 && params.topK < V;
  const useP = params.topP < 1;
  if (!useK && !useP) return null;
  let ids: number[];
  let w: number[];
  let total = 0;
  if (useK) {
    ids = topKIds(z, params.topK);
    if (!useP) return ids;
    // top-p over what top-k kept, renormalised.
    const m = z[ids[0]] * invT;
    w = ids.map((id) => Math.exp(z[id] * invT - m));
    for (const x of w) total += x;
  } else {
    // Only tokens with probability >= (1 - p) / V can be kept: everything below that has at
    // least p of the mass before it. Sorting just those avoids sorting the whole vocabulary.
    const lse = logSumExp(z, invT);
    const floor = Math.log((1 - params.topP) / V);
    ids = [];
    for (let i = 0; i < V; i++) if (z[i] * invT - lse >= floor) ids.push(i);
    ids.sort((a, b) => (z[b] - z[a]) || a - b);
    w = ids.map((id) => Math.exp(z[id] * invT - lse));
    total = 1;
  }
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
  const lse = logSumExp(z, invT);
  const kept = support(z, params);
  let token = -1;
  if (kept === null) {
    // Walk the CDF of the full softmax; rounding can leave the sum a hair below u·1, so the last
    // token with nonzero mass is the fallback.
    let acc = 0;
    let last = 0;
    for (let i = 0; i < z.length; i++) {
      const p = Math.exp(z[i] * invT - lse);
      if (p > 0) last = i;
      acc += p;
      if (acc > u) {
        token = i;
        break;
      }
    }
    if (token < 0) token = last;
  } else {
    let total = 0;
    const w = kept.map((id) => Math.exp(z[id] * invT - lse));
    for (const x of w) total += x;
    const target = u * total;
    let acc = 0;
    for (let j = 0; j < kept.length; j++) {
      acc += w[j];
      if (acc > target) {
        token = kept[j];
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
