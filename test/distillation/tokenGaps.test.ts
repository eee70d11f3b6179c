// Per-token student-vs-teacher log-probs: what on-policy distillation records for each datum, the
// sidecar file beside the iteration's transcripts, and how the transcripts screen finds and colours
// a trajectory's tokens.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { tokenGapRecord } from "../../src/distillation/onPolicy.ts";
import { appendTokenGaps, readTokenGaps, tokenGapKey } from "../../src/log/transcripts/tokenGaps.ts";
import { normalizeTranscript } from "../../src/runs/transcripts.ts";
import { tensorDataFromFloat32, tensorDataFromInt64 } from "../../src/tinker/tensorData.ts";
import { findTokenGaps, gapClass, gapLines, gapSummary } from "../../src/tui/core/tokenGaps.ts";

test("a datum's sampled positions become one record: prompt length, tokens, pieces, both log-probs", () => {
  // Prompt of 3 tokens (positions 0, 1 predict prompt tokens), then 2 sampled tokens at positions 2, 3.
  const datum = {
    model_input: { chunks: [{ type: "encoded_text" as const, tokens: [1, 2, 3, 7] }] },
    loss_fn_inputs: {
      target_tokens: tensorDataFromInt64([2, 3, 7, 8]),
      logprobs: tensorDataFromFloat32([0, 0, -0.5, -3]),
      mask: tensorDataFromFloat32([0, 0, 1, 1]),
      advantages: tensorDataFromFloat32([0, 0, 0, 0]),
    },
  };
  const rec = tokenGapRecord(datum, [-9, -9, -0.25, -0.5], (t) => `<${t[0]}>`);
  assert.deepEqual(rec, { ob_len: 3, tokens: [7, 8], pieces: ["<7>", "<8>"], student: [-0.5, -3], teacher: [-0.25, -0.5] });
});

test("the sidecar round-trips, a trajectory finds its line by prompt length and tokens, gaps are classed by size", () => {
  const dir = mkdtempSync(join(tmpdir(), "token-gaps-"));
  try {
    appendTokenGaps(dir, 4, [{ ob_len: 3, tokens: [7, 8, 9], pieces: ["a", "\n", "c"], student: [-0.1, -1, -4], teacher: [-0.2, -2.5, -0.5] }]);
    appendTokenGaps(dir, 4, [{ ob_len: 5, tokens: [7], student: [0], teacher: [0] }]);
    const gaps = readTokenGaps(dir, 4);
    assert.deepEqual([...gaps.keys()], [tokenGapKey(3, [7, 8, 9]), tokenGapKey(5, [7])]);
    assert.equal(readTokenGaps(dir, 5).size, 0, "another iteration has none");
    const record = normalizeTranscript({ group_idx: 0, traj_idx: 0, total_reward: 0, steps: [{ step_idx: 0, ob_len: 3, ac_len: 3, ac_tokens: [7, 8, 9] }] });
    const found = findTokenGaps(record, gaps);
    assert.ok(found);
    assert.equal(findTokenGaps(normalizeTranscript({ steps: [{ ob_len: 4, ac_tokens: [7, 8, 9] }] }), gaps), undefined, "another prompt length does not match");
    assert.equal(findTokenGaps(normalizeTranscript({ steps: [{ ob_len: 3 }] }), gaps), undefined, "records without tokens (Python-written) do not match");
    // Gaps: 0.1 small, 1.5 medium, −3.5 large; the newline piece shows as ⏎.
    assert.deepEqual(
      gapLines(found, 80)
        .flat()
        .map((g) => [g.text, g.cls]),
      [
        ["a", "small"],
        ["⏎", "medium"],
        ["c", "large"],
      ],
    );
    assert.deepEqual(
      gapLines(found, 2).map((l) => l.map((g) => g.text).join("")),
      ["a⏎", "c"],
      "wrapped at the width",
    );
    const sum = gapSummary(found);
    assert.ok(Math.abs(sum.meanAbs - (0.1 + 1.5 + 3.5) / 3) < 1e-9);
    assert.deepEqual([sum.worst, sum.worstIndex], [-3.5, 2]);
    assert.deepEqual([gapClass(0.49), gapClass(-0.5), gapClass(1.99), gapClass(2)], ["small", "medium", "medium", "large"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
