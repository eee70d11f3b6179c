// Code RL (the cookbook's code_rl, docs/code-rl.md): the policy writes Python in a fenced block,
// which runs against hidden tests in the local sandbox (src/sandbox: rlimits, no network, a
// read-only filesystem but its own folder). reward = format_coef·(has_code_block − 1) + correct.
// env=tasks (default) trains on the shipped generated tasks (scripts/makeCodeTasks.ts); env=deepcoder
// reads the cookbook's DeepCoder dataset and env=mbpp MBPP, from local parquet, the HF cache or the hub.
// tiny-chat has never seen code, so on the shipped tasks a short supervised warm-up first teaches
// the reply's format; its operator token is trained toward the right operator in a quarter of the
// examples and toward all six alike in the rest, so RL starts from a weak preference to sharpen.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { CODE_OPS, codeReply, operatorOfTests } from "../../src/data/synthetic/codeTasks.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { readCodeTasksJsonl, readDeepcoder, readMbpp, type CodeTask } from "../../src/grading/codeTasks.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { codeTaskDataset, type CodeEnvOptions } from "../../src/rl/envs/code.ts";
import { type RLRecipeSetup, runRLRecipe } from "../../src/rl/recipeRuntime.ts";
import type { RLDatasetBuilder } from "../../src/rl/types.ts";
import type { RLRenderer } from "../../src/renderers/policyRenderer.ts";
import { supervisedWarmup, warmupRunFields } from "../../src/supervised/warmup.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    env: z
      .enum(["tasks", "deepcoder", "mbpp"])
      .default("tasks")
      .describe("Problem source: the shipped generated tasks, DeepCoder (the cookbook's data) or MBPP"),
    tasks_path: z
      .string()
      .default(fixtureDataPath("code_tasks_train.jsonl"))
      .describe('env=tasks: JSONL of {"id", "question", "starter_code"?, "tests": [...]}'),
    tasks_test_path: z.string().nullable().default(fixtureDataPath("code_tasks_test.jsonl")).describe("env=tasks: held-out tasks (null = none)"),
    prompt_style: z
      .enum(["short", "lcb"])
      .default("short")
      .describe(
        "env=tasks: short (statement + one line, ~40 tokens for tiny-chat) or lcb (the cookbook's LiveCodeBench prompt, ~250 tokens; DeepCoder always uses it)",
      ),
    deepcoder_dataset: z
      .string()
      .default("agentica-org/DeepCoder-Preview-Dataset")
      .describe("env=deepcoder: hub id, or a local folder with <subset>/{train,test}-*.parquet"),
    mbpp_dataset: z.string().default("google-research-datasets/mbpp").describe("env=mbpp: hub id, or a local folder with full/{train,test}-*.parquet"),
    test_problems: z.number().int().min(0).default(48).describe("Held-out problems per evaluation (0 = no test set)"),
    format_coef: z.number().min(0).default(0.1).describe("Reward lost by a reply without a fenced code block"),
    reward: z.enum(["all", "fraction"]).default("all").describe("all: 1 when every test passes (the cookbook's rule); fraction: the share of tests passed"),
    test_timeout_seconds: z.number().positive().default(6).describe("Time limit of one test (the sandbox's wall limit is (this + 1) × tests + 5 s)"),
    sandbox_memory_mb: z.number().int().positive().default(512).describe("Memory limit of a sandboxed run"),
    sandbox_max_processes: z.number().int().positive().default(16).describe("Processes a sandboxed run may start, itself included"),
    warmup_steps: z
      .number()
      .int()
      .min(0)
      .default(200)
      .describe("env=tasks: supervised warm-up steps teaching the reply's format before RL (0 = none; the operator token is trained toward all six alike)"),
    warmup_batch_size: z.number().int().positive().default(16).describe("Warm-up examples per step"),
    warmup_learning_rate: z.number().positive().default(5e-3).describe("Warm-up peak learning rate (linear decay)"),
    warmup_answer_share: z
      .number()
      .min(0)
      .max(1)
      .default(0.25)
      .describe(
        "Share of warm-up examples that show the right operator; the rest train the operator toward all six alike (0 = RL learns the choice from chance alone)",
      ),
  }),
  {
    log_path: "/tmp/tinker-examples/code_rl",
    // 2e-3 broke the warmed-up reply's format within 3 steps (format 1.0 → 0.42, correct → 0).
    learning_rate: 6e-4,
    max_tokens: 40,
    lora_rank: 16,
    max_steps: 30,
    eval_every: 10,
    save_every: 10,
    group_size: 8,
    groups_per_batch: 8,
  },
);
export type CodeRlConfig = z.output<typeof configSchema>;

function envOptions(config: CodeRlConfig): CodeEnvOptions {
  return {
    formatCoef: config.format_coef,
    reward: config.reward,
    testTimeoutSeconds: config.test_timeout_seconds,
    limits: { memoryMb: config.sandbox_memory_mb, maxProcesses: config.sandbox_max_processes },
  };
}

async function taskSplits(config: CodeRlConfig): Promise<{ train: CodeTask[]; test: CodeTask[] | null }> {
  const wantTest = config.test_problems > 0;
  if (config.env === "tasks") {
    const testPath = config.tasks_test_path;
    return {
      train: readCodeTasksJsonl(config.tasks_path, config.prompt_style),
      test: wantTest && testPath !== null ? readCodeTasksJsonl(testPath, config.prompt_style) : null,
    };
  }
  if (config.env === "deepcoder") {
    return {
      train: await readDeepcoder("train", { path: config.deepcoder_dataset }),
      test: wantTest ? await readDeepcoder("test", { path: config.deepcoder_dataset }) : null,
    };
  }
  return { train: await readMbpp("train", { path: config.mbpp_dataset }), test: wantTest ? await readMbpp("test", { path: config.mbpp_dataset }) : null };
}

/** The environments the loop trains in; `cookbook play code_rl` puts a person in them. */
export function environments(config: CodeRlConfig, { renderer }: RLRecipeSetup): RLDatasetBuilder {
  const rl: RLRenderer = renderer;
  return {
    async build() {
      const { train, test } = await taskSplits(config);
      const trainDs = codeTaskDataset(train, {
        ...envOptions(config),
        renderer: rl,
        batchSize: config.groups_per_batch,
        groupSize: config.group_size,
        datasetName: config.env,
        shuffleSeed: config.seed,
      });
      if (trainDs.length === 0) throw new Error(`code_rl: ${train.length} training problems, fewer than groups_per_batch=${config.groups_per_batch}`);
      const held = test === null ? [] : test.slice(0, config.test_problems);
      const testDs =
        held.length === 0
          ? null
          : codeTaskDataset(held, { ...envOptions(config), renderer: rl, batchSize: held.length, groupSize: 1, datasetName: config.env });
      return { train: trainDs, test: testDs };
    },
  };
}

/** The warm-up's transcripts: a training prompt, then the reply with its operator left open. */
async function warmup(config: CodeRlConfig, context?: RecipeContext): Promise<string> {
  const tasks = readCodeTasksJsonl(config.tasks_path, config.prompt_style);
  const spec = {
    ...warmupRunFields(config),
    steps: config.warmup_steps,
    batch_size: config.warmup_batch_size,
    learning_rate: config.warmup_learning_rate,
    data: `code_rl format warm-up on ${config.tasks_path} (${config.prompt_style} prompts), operators ${CODE_OPS.map((o) => o.symbol).join("")}, answer share ${config.warmup_answer_share}`,
  };
  const done = await supervisedWarmup(
    spec,
    (_renderer, count) => {
      const rng = new Prng(config.seed);
      return Array.from({ length: count }, (_, i) => {
        const task = tasks[i % tasks.length]!;
        const right = operatorOfTests(task.tests);
        const shown = right !== null && rng.chance(config.warmup_answer_share);
        return {
          messages: [{ role: "user", content: task.prompt }],
          alternatives: shown ? [codeReply(right.symbol)] : CODE_OPS.map((op) => codeReply(op.symbol)),
        };
      });
    },
    context,
  );
  return done.statePath;
}

async function main(config: CodeRlConfig, context?: RecipeContext): Promise<void> {
  const warm = config.env === "tasks" && config.warmup_steps > 0 && config.load_checkpoint_path === null;
  const loadCheckpointPath = warm ? await warmup(config, context) : config.load_checkpoint_path;
  await runRLRecipe({ ...config, load_checkpoint_path: loadCheckpointPath }, (setup) => environments(config, setup), context);
}

export default defineRecipe({
  name: "code_rl",
  description:
    "Code RL: Python in a fenced block, run against hidden tests in the local sandbox (default: shipped generated tasks after a format warm-up; DeepCoder or MBPP from the hub)",
  configSchema,
  main,
});
