// RL with verifiable rewards on math (the cookbook's math_rl). env=arithmetic (default) draws
// fresh two-number additions; env=file reads {"question","answer"} JSONL (graded on the first
// chunk of the answer, or on \boxed{} with grader=boxed); env=gsm8k reads openai/gsm8k, and
// env=math / deepmath / polaris read Hendrycks MATH (tested on MATH-500), DeepMath-103K or
// Polaris-53K from a local path, the HF cache or the hub, all graded on \boxed{} answers.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { ARITHMETIC_FEWSHOT, arithmeticDatasetBuilder } from "../../src/rl/envs/arithmetic.ts";
import { extractBoxed, grade, gradeFirstChunk } from "../../src/grading/index.ts";
import { ProblemListDataset, QuestionAnswerEnv, type QAProblem } from "../../src/rl/envs/problems.ts";
import { readDeepMath, readGsm8k, readHendrycksMath, readMath500, readPolaris, readQAJsonl } from "../../src/rl/envs/qaSources.ts";
import type { Message, RLRenderer } from "../../src/renderers/policyRenderer.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import { interleavedRLDatasetBuilder } from "../../src/rl/mixture.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { overrideDefaults } from "../../src/training/config.ts";

const MathEnvSchema = z.enum(["arithmetic", "file", "gsm8k", "math", "deepmath", "polaris"]);

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    env: MathEnvSchema.default("arithmetic").describe("Problem source"),
    mixture: z
      .array(z.object({ env: MathEnvSchema, weight: z.number().positive() }))
      .min(1)
      .nullable()
      .default(null)
      .describe(
        'Instead of env: a weighted mixture of sources, e.g. [{"env":"arithmetic","weight":3},{"env":"file","weight":1}]; each group comes from one source, metrics per source under env/<source>/',
      ),
    dataset_path: z.string().default(fixtureDataPath("arithmetic.jsonl")).describe("env=file: JSONL of {question, answer}"),
    test_path: z.string().nullable().default(fixtureDataPath("arithmetic_test.jsonl")).describe("env=file: held-out JSONL (null = none)"),
    gsm8k_dataset: z.string().default("openai/gsm8k").describe("env=gsm8k: hub id, or a local folder with main/{train,test}-*.parquet"),
    math_dataset: z
      .string()
      .nullable()
      .default(null)
      .describe(
        "env=math/deepmath/polaris: hub id or local folder (null = EleutherAI/hendrycks_math, zwhe99/DeepMath-103K, POLARIS-Project/Polaris-Dataset-53K)",
      ),
    math500_dataset: z
      .string()
      .default("HuggingFaceH4/MATH-500")
      .describe("env=math: the held-out test set (hub id or local parquet); its problems are removed from training"),
    grader: z.enum(["first_chunk", "boxed"]).default("first_chunk").describe("env=file: how answers are checked"),
    test_problems: z.number().int().min(0).default(32).describe("Held-out problems per evaluation (0 = no test set)"),
    format_coef: z.number().min(0).default(0.1).describe("Reward lost by a malformed answer"),
  }),
  {
    log_path: "/tmp/tinker-examples/math_rl",
    learning_rate: 3e-3,
    max_tokens: 8,
    lora_rank: 8,
    max_steps: 30,
    eval_every: 10,
    save_every: 10,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type MathRlConfig = z.output<typeof configSchema>;

const BOXED_SUFFIX = " Write the final answer as a number inside \\boxed{}.";
const BOXED_FEWSHOT: Message[] = [
  { role: "user", content: `Tom has 3 apples and buys 4 more. How many apples does he have?${BOXED_SUFFIX}` },
  { role: "assistant", content: "Tom has 3 + 4 = 7 apples. \\boxed{7}" },
];

/** The cookbook's MathEnv question suffix and few-shot turn (math, deepmath, polaris). */
const MATH_SUFFIX = " Write your answer in \\boxed{} format.";
const MATH_FEWSHOT: Message[] = [
  { role: "user", content: `How many r's are in strawberry?${MATH_SUFFIX}` },
  {
    role: "assistant",
    content:
      "Let's spell the word out and number all the letters: 1) s 2) t 3) r 4) a 5) w 6) b 7) e 8) r 9) r 10) y. We have r's at positions 3, 8, and 9. \\boxed{3}",
  },
];

type Prompting = "first_chunk" | "boxed" | "math";

function problemEnvFactory(renderer: RLRenderer, config: MathRlConfig, prompting: Prompting) {
  if (prompting === "first_chunk")
    return (p: QAProblem) => new QuestionAnswerEnv(renderer, p, gradeFirstChunk, { convoPrefix: ARITHMETIC_FEWSHOT, formatCoef: config.format_coef });
  const [convoPrefix, questionSuffix] = prompting === "math" ? [MATH_FEWSHOT, MATH_SUFFIX] : [BOXED_FEWSHOT, BOXED_SUFFIX];
  return (p: QAProblem) =>
    new QuestionAnswerEnv(renderer, p, (r, ref) => grade(r, ref, { mode: "boxed" }), {
      convoPrefix,
      questionSuffix,
      formatCoef: config.format_coef,
      formatCheck: (r) => extractBoxed(r) !== null,
    });
}

function listBuilder(
  renderer: RLRenderer,
  config: MathRlConfig,
  name: string,
  prompting: Prompting,
  train: () => Promise<QAProblem[]>,
  test: () => Promise<QAProblem[] | null>,
): RLDatasetBuilder {
  const makeEnv = problemEnvFactory(renderer, config, prompting);
  return {
    async build() {
      const trainDs = new ProblemListDataset(await train(), {
        batchSize: config.groups_per_batch,
        groupSize: config.group_size,
        makeEnv,
        datasetName: name,
        shuffleSeed: config.seed,
      });
      if (trainDs.length === 0) throw new Error(`${name}: fewer problems than groups_per_batch=${config.groups_per_batch}`);
      const testProblems = config.test_problems > 0 ? await test() : null;
      const testDs =
        testProblems === null || testProblems.length === 0
          ? null
          : new ProblemListDataset(testProblems.slice(0, config.test_problems), {
              batchSize: Math.min(config.test_problems, testProblems.length),
              groupSize: 1,
              makeEnv,
              datasetName: name,
            });
      return { train: trainDs, test: testDs };
    },
  };
}

/** The environments the loop trains in; `cookbook play math_rl` puts a person in them. */
export async function environments(config: MathRlConfig, setup: RLRecipeSetup): Promise<RLDatasetBuilder> {
  const mixture = config.mixture;
  if (mixture === null) return sourceEnvironments(config, setup);
  const sources = await Promise.all(
    mixture.map(async (m) => ({ name: m.env, weight: m.weight, builder: await sourceEnvironments({ ...config, env: m.env }, setup) })),
  );
  // With max_steps the mixture is scheduled for exactly that many batches, small sources cycling.
  return interleavedRLDatasetBuilder(sources, { groupsPerBatch: config.groups_per_batch, totalBatches: config.max_steps, seed: config.seed });
}

function sourceEnvironments(config: MathRlConfig, { renderer }: RLRecipeSetup): RLDatasetBuilder | Promise<RLDatasetBuilder> {
  if (config.env === "arithmetic") {
    return arithmeticDatasetBuilder({
      renderer,
      batchSize: config.groups_per_batch,
      groupSize: config.group_size,
      numBatches: 100_000,
      seed: config.seed,
      formatCoef: config.format_coef,
      testProblems: config.test_problems,
    });
  }
  if (config.env === "file") {
    const testPath = config.test_path;
    return listBuilder(
      renderer,
      config,
      "file",
      config.grader === "boxed" ? "boxed" : "first_chunk",
      async () => readQAJsonl(config.dataset_path),
      async () => (testPath === null ? null : readQAJsonl(testPath)),
    );
  }
  if (config.env === "gsm8k") {
    return listBuilder(
      renderer,
      config,
      "gsm8k",
      "boxed",
      () => readGsm8k("train", { path: config.gsm8k_dataset }),
      () => readGsm8k("test", { path: config.gsm8k_dataset }),
    );
  }
  const path = config.math_dataset ?? undefined;
  if (config.env === "math") {
    let test: Promise<QAProblem[]> | null = null;
    const math500 = () => (test ??= readMath500({ path: config.math500_dataset }));
    return listBuilder(renderer, config, "math", "math", async () => readHendrycksMath(await math500(), path === undefined ? {} : { path }), math500);
  }
  // DeepMath and Polaris have a train split only, as in the cookbook: no test set.
  const read = config.env === "deepmath" ? readDeepMath : readPolaris;
  return listBuilder(
    renderer,
    config,
    config.env,
    "math",
    () => read(path === undefined ? {} : { path }),
    async () => null,
  );
}

async function main(config: MathRlConfig, context?: RecipeContext): Promise<void> {
  await runRLRecipe(config, (setup) => environments(config, setup), context);
}

export default defineRecipe({
  name: "math_rl",
  description: "RL with verifiable rewards on math: synthetic addition, a question/answer JSONL file, GSM8K, MATH, DeepMath or Polaris",
  configSchema,
  main,
});
