// "Did you mean" suggestions for mistyped config keys and recipe names.

/** Levenshtein distance (insert, delete, substitute each cost 1). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost));
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * Up to `limit` candidates nearest to `name` (within 2 edits of the nearest). A dotted candidate also matches by its last segment,
 * so `num_minibatches` finds `stream_minibatch.num_minibatches`. Ties keep the candidates' order.
 */
export function closestMatches(name: string, candidates: readonly string[], limit = 3): string[] {
  const scored = candidates.map((candidate, index) => {
    const last = candidate.slice(candidate.lastIndexOf(".") + 1);
    const distance = Math.min(editDistance(name, candidate), editDistance(name, last));
    return { candidate, distance, index };
  });
  scored.sort((x, y) => x.distance - y.distance || x.index - y.index);
  // Far-off names are noise next to a near miss: keep those within 2 edits of the best.
  const best = scored[0]?.distance ?? 0;
  return scored
    .filter((s) => s.distance <= best + 2)
    .slice(0, limit)
    .map((s) => s.candidate);
}
