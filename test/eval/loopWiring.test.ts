import { test } from "node:test";
import assert from "node:assert/strict";
import { evalDue, runEvaluations, type Ctx } from "../../src/rl/loop/context.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";

function evaluator(name: string, calls: string[]) {
  return {
    name,
    evaluate: async () => {
      calls.push(name);
      return { [`test/${name}/accuracy`]: 1 };
    },
  };
}

test("RL: eval_every runs the frequent evaluators, infrequent_eval_every adds the infrequent ones", async () => {
  const calls: string[] = [];
  const ctx = {
    config: { eval_every: 2, infrequent_eval_every: 3, num_groups_to_log: 0, rollout_json_export: false },
    logPath: "/nonexistent",
    evaluators: [evaluator("freq", calls)],
    infrequentEvaluators: [evaluator("rare", calls)],
  } as unknown as Ctx;
  const sampler = {} as SamplingClient;
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6].map((s) => evalDue(ctx, s)),
    [true, false, true, true, true, false, true],
  );
  assert.deepEqual(Object.keys(await runEvaluations(ctx, sampler, 2)), ["test/freq/accuracy"]);
  assert.deepEqual(Object.keys(await runEvaluations(ctx, sampler, 3)), ["test/rare/accuracy"]);
  assert.deepEqual(Object.keys(await runEvaluations(ctx, sampler, 6)).sort(), ["test/freq/accuracy", "test/rare/accuracy"]);
  // A forced run (the streaming loop's last iteration) with nothing due runs the frequent ones.
  assert.deepEqual(Object.keys(await runEvaluations(ctx, sampler, 5)), ["test/freq/accuracy"]);
});

test("loop configs take benchmark lists and BenchmarkConfig overrides", () => {
  const rl = RLConfigSchema.parse({
    log_path: "/tmp/x",
    learning_rate: 1e-3,
    max_tokens: 8,
    benchmarks: ["arithmetic:9"],
    benchmark_config: { max_examples: 16, temperature: 0 },
  });
  assert.deepEqual([rl.benchmarks, rl.infrequent_benchmarks, rl.infrequent_eval_every], [["arithmetic:9"], [], 0]);
  assert.equal(rl.benchmark_config.max_examples, 16);
  assert.equal(rl.benchmark_config.temperature, 0);
  const sl = SupervisedConfigSchema.parse({ log_path: "/tmp/x", infrequent_benchmarks: ["gsm8k"] });
  assert.deepEqual([sl.benchmarks, sl.infrequent_benchmarks], [[], ["gsm8k"]]);
});
