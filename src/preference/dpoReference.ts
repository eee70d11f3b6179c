// Reference logprobs for DPO: the frozen initial policy scores every datum's full sequence once
// (compute_logprobs), aligned to the datum's targets.
import { fullSequenceInput } from "../rl/metrics.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { Datum } from "../tinker/types.ts";

export async function referenceLogprobs(reference: SamplingClient, data: readonly Datum[]): Promise<Float32Array[]> {
  return Promise.all(
    data.map(async (d) => {
      const lps = await reference.computeLogprobs(fullSequenceInput(d));
      return Float32Array.from(lps.slice(1), (v) => v ?? 0);
    }),
  );
}
