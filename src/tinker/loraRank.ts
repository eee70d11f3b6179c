// The LoRA ranks a Tinker server accepts: positive powers of two. One rule for the config schema
// (refused before a run directory exists), the HTTP client and the embedded engine.

export function isValidLoraRank(rank: number): boolean {
  return Number.isInteger(rank) && rank >= 1 && (rank & (rank - 1)) === 0;
}

export const LORA_RANK_RULE = "a positive power of two (1, 2, 4, 8, 16, 32, 64, 128, ...)";
