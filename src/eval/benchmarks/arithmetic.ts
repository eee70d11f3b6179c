// Two-number addition, offline: the held-out pairs of the synthetic arithmetic data (never in a
// training stream), asked exactly like the RL env asks them (one-shot "What is 4 + 5?" → "9"),
// graded on the first chunk of the answer. The default range is the one the offline RL recipes
// train (rl_basic: operands 0..9, where the shipped tiny model can learn); `arithmetic:100` is the
// Python cookbook's range, `arithmetic:<max>` any other. Ranges too small to have 50 held-out
// pairs use every pair.
import { ARITHMETIC_FEWSHOT_PREFIX, additionProblem, allAdditionPairs } from "../../data/synthetic/arithmetic.ts";
import { seededShuffle } from "../../data/shuffle.ts";
import { BenchmarkDataError, type EvalExample, type GenerationBenchmark } from "../benchmark.ts";
import { gradeFirstChunk } from "../../grading/index.ts";

const MIN_HELD_OUT = 50;
/** rl_basic's default `max_operand`: the benchmark measures the task the default recipe trains. */
export const DEFAULT_MAX_OPERAND = 9;

export function arithmeticBenchmark(source: string | null): GenerationBenchmark {
  const isDefault = source === null || source === "";
  const maxOperand = isDefault ? DEFAULT_MAX_OPERAND : Number(source);
  if (!Number.isInteger(maxOperand) || maxOperand < 1) {
    throw new BenchmarkDataError(`arithmetic:${source}: expected a positive integer maximum operand, e.g. arithmetic:9`);
  }
  return {
    kind: "generation",
    name: isDefault ? "arithmetic" : `arithmetic_max${maxOperand}`,
    description: `Two-number addition, operands 0..${maxOperand} (held-out pairs), first-chunk grading`,
    defaults: { max_examples: 200, max_tokens: 8, temperature: 0.6, num_samples: 1 },
    async load() {
      let pairs = allAdditionPairs("test", maxOperand);
      if (pairs.length < MIN_HELD_OUT) {
        pairs = [];
        for (let x = 0; x <= maxOperand; x++) for (let y = 0; y <= maxOperand; y++) pairs.push([x, y]);
      }
      // A fixed shuffle so max_examples takes pairs from the whole grid.
      return seededShuffle(pairs, 1234).map(([x, y]): EvalExample => {
        const p = additionProblem(x, y);
        return {
          id: `${x}+${y}`,
          prompt: [...ARITHMETIC_FEWSHOT_PREFIX.map((m) => ({ role: m.role, content: m.content })), { role: "user", content: p.question }],
          reference: p.answer,
        };
      });
    },
    grade: (response, example) => gradeFirstChunk(response, example.reference),
  };
}
