// What a request costs the engine, in tokens: the unit of the per-request cap on sampling and of
// the fair scheduler's budget.
import { modelInputLength } from "../tinker/modelInput.ts";
import type { ModelInput } from "../tinker/types.ts";
import { HttpError } from "./http.ts";

/**
 * num_samples × (prompt + max_tokens), refused with a 400 above `cap`. An unset max_tokens lets
 * the engine generate up to the model's context window, which the server does not know here, so
 * it counts as one token; the context window bounds such requests.
 */
export function sampleCost(numSamples: number, prompt: ModelInput, maxTokens: number | undefined, cap: number): number {
  const promptTokens = modelInputLength(prompt);
  const cost = numSamples * (promptTokens + (maxTokens ?? 1));
  if (cost > cap) {
    throw new HttpError(
      400,
      `sample request too large: num_samples × (prompt + max_tokens) = ${numSamples} × (${promptTokens} + ${maxTokens ?? 1}) = ${cost} tokens, ` +
        `above this server's limit of ${cap} per request; split it into several requests (fewer samples each) or start the server with a larger --max-sample-tokens`,
    );
  }
  return cost;
}
