// pass@k with the unbiased estimator (Chen et al. 2021): from n samples of which c are correct,
// the chance that at least one of k samples drawn without replacement is correct,
// 1 − C(n−c, k) / C(n, k), computed as a running product so large n does not overflow.

export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new RangeError(`passAtK needs integers 0 <= c <= n and 1 <= k <= n, got n=${n} c=${c} k=${k}`);
  }
  if (n - c < k) return 1;
  // C(n−c, k)/C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i)
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/** The k values reported for n samples per example: 1, 2, 4, … up to n, and n itself. */
export function reportedKs(n: number): number[] {
  const ks: number[] = [];
  for (let k = 1; k <= n; k *= 2) ks.push(k);
  if (ks[ks.length - 1] !== n) ks.push(n);
  return ks;
}

/** Mean pass@k over examples, each given as (samples, correct samples). */
export function meanPassAtK(perExample: readonly { n: number; c: number }[], k: number): number {
  if (perExample.length === 0) return 0;
  let sum = 0;
  for (const { n, c } of perExample) sum += passAtK(n, c, Math.min(k, n));
  return sum / perExample.length;
}
