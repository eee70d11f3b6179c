// `cookbook run <recipe> … --dry-run`: probe the config, estimate, price it when it would run on a
// remote service. Exported for the TUI's launch form and `cookbook batch --dry-run`.
import { estimateFromProbe, formatEstimate, priceFor, readPriceTable, type RunEstimate } from "./probe.ts";
import { probeRecipe } from "./runProbe.ts";

export interface EstimateOptions {
  prices?: string;
  probeSteps?: number;
  onProgress?: (message: string) => void;
}

export async function measureEstimate(
  recipe: string,
  args: readonly string[],
  config: Record<string, unknown>,
  options: EstimateOptions = {},
): Promise<RunEstimate> {
  options.onProgress?.(`measuring ${options.probeSteps ?? 4} steps of ${recipe} with this config on the embedded engine…`);
  const evalEvery = typeof config["eval_every"] === "number" ? config["eval_every"] : undefined;
  const estimate = estimateFromProbe(await probeRecipe(recipe, args, { steps: options.probeSteps }), evalEvery !== undefined ? { evalEvery } : {});
  const remote = typeof config["base_url"] === "string" && config["base_url"] !== "local";
  if (remote) {
    const price = priceFor(readPriceTable(options.prices), String(config["model_name"]));
    if (price !== undefined && estimate.totalTokens !== null) estimate.costUsd = (estimate.totalTokens / 1e6) * price;
    estimate.notes.push(
      `base_url is set: steps and tokens were measured on the embedded engine; the wall time on the service will differ${options.prices === undefined ? "; prices from the built-in table, pass --prices <file> for yours" : ""}`,
    );
  }
  return estimate;
}

/** The estimate as the person reads it. */
export async function estimateRun(recipe: string, args: readonly string[], config: Record<string, unknown>, options: EstimateOptions = {}): Promise<string> {
  return formatEstimate(await measureEstimate(recipe, args, config, options), recipe);
}
