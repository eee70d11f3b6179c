// Tinker's built-in per-token losses (docs/protocol.md#built-in-losses) as pure functions of the learner
// log-prob `lp` of the target token. Each returns the token's loss and dloss/dlp; the model sums
// losses over every token of every datum (never a mean) and chains dlp into the logits.
import { InvalidArgumentError } from "../../tinker/errors.ts";
import type { LossFnName } from "../../tinker/types.ts";

export const LOSS_FUNCTIONS: readonly LossFnName[] = ["cross_entropy", "importance_sampling", "ppo", "cispo", "dro"];

interface LossDefinition {
  /** Per-token inputs besides target_tokens that must be present. */
  readonly required: readonly string[];
  /** Per-token inputs that may be present (weights act as a mask for the RL losses). */
  readonly optional: readonly string[];
  /** loss_fn_config keys with defaults. */
  readonly config: Readonly<Record<string, number>>;
}

const DEFINITIONS: Record<LossFnName, LossDefinition> = {
  cross_entropy: { required: ["weights"], optional: [], config: {} },
  importance_sampling: { required: ["logprobs", "advantages"], optional: ["weights"], config: {} },
  ppo: { required: ["logprobs", "advantages"], optional: ["weights"], config: { clip_low_threshold: 0.8, clip_high_threshold: 1.2 } },
  // The tutorial's CISPO bounds are one-sided in practice: the low bound 0 never binds.
  cispo: { required: ["logprobs", "advantages"], optional: ["weights"], config: { clip_low_threshold: 0.0, clip_high_threshold: 4.0 } },
  dro: { required: ["logprobs", "advantages"], optional: ["weights"], config: { beta: 0.05 } },
};

export interface ResolvedLoss {
  readonly name: LossFnName;
  readonly required: readonly string[];
  readonly optional: readonly string[];
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly beta: number;
}

function isLossName(name: string): name is LossFnName {
  return (LOSS_FUNCTIONS as readonly string[]).includes(name);
}

/** Checks the loss name and its config (unknown keys, non-finite values) and fills defaults. */
export function resolveLoss(name: string, config: Record<string, number> | undefined): ResolvedLoss {
  if (!isLossName(name)) {
    throw new InvalidArgumentError(`unknown loss function ${JSON.stringify(name)}; known: ${LOSS_FUNCTIONS.join(", ")}`);
  }
  const def = DEFINITIONS[name];
  const values: Record<string, number> = { ...def.config };
  for (const [key, value] of Object.entries(config ?? {})) {
    if (!(key in def.config)) {
      const known = Object.keys(def.config);
      throw new InvalidArgumentError(
        `loss_fn_config key ${JSON.stringify(key)} is not used by ${name}; ${known.length > 0 ? `known keys: ${known.join(", ")}` : "it takes no config"}`,
      );
    }
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new InvalidArgumentError(`loss_fn_config.${key} for ${name} must be a finite number, got ${String(value)}`);
    }
    values[key] = value;
  }
  const clipLow = values.clip_low_threshold ?? 0;
  const clipHigh = values.clip_high_threshold ?? Infinity;
  if (clipLow > clipHigh) {
    throw new InvalidArgumentError(`loss_fn_config for ${name}: clip_low_threshold (${clipLow}) must not exceed clip_high_threshold (${clipHigh})`);
  }
  return { name, required: def.required, optional: def.optional, clipLow, clipHigh, beta: values.beta ?? 0 };
}

/** The per-token values a loss reads; `weight` is 1 when an RL loss got no weights. */
export interface TokenInputs {
  weight: number;
  advantage: number;
  samplerLogprob: number;
}

export interface TokenLoss {
  loss: number;
  /** d loss / d lp. */
  dlp: number;
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : Math.min(x, hi);
}

export function tokenLoss(loss: ResolvedLoss, lp: number, t: TokenInputs): TokenLoss {
  const w = t.weight;
  const A = t.advantage;
  switch (loss.name) {
    case "cross_entropy":
      return { loss: -lp * w, dlp: -w };
    case "importance_sampling": {
      const ratio = Math.exp(lp - t.samplerLogprob);
      return { loss: -ratio * A * w, dlp: -ratio * A * w };
    }
    case "ppo": {
      const ratio = Math.exp(lp - t.samplerLogprob);
      const unclipped = ratio * A;
      const clipped = clamp(ratio, loss.clipLow, loss.clipHigh) * A;
      // min picks the unclipped term (gradient ratio·A) unless the clipped one is smaller, which
      // only happens with the ratio outside the bounds, where the clipped term is constant.
      if (unclipped <= clipped) return { loss: -unclipped * w, dlp: -unclipped * w };
      return { loss: -clipped * w, dlp: 0 };
    }
    case "cispo": {
      const ratio = Math.exp(lp - t.samplerLogprob);
      const coef = clamp(ratio, loss.clipLow, loss.clipHigh) * A; // stop-gradient: a constant
      return { loss: -coef * lp * w, dlp: -coef * w };
    }
    case "dro": {
      const diff = lp - t.samplerLogprob;
      const beta = loss.beta;
      return { loss: -(lp * A - 0.5 * beta * diff * diff) * w, dlp: -(A - beta * diff) * w };
    }
  }
}
