// On-policy distillation (the cookbook's distillation/on_policy_distillation): the student
// samples, a teacher scores the student's own tokens, and the per-token reverse KL is the only
// training signal — no task reward. The defaults distil fixtures/models/tiny-chat-teacher (the
// same tiny model trained 300 steps longer on addition: ~87% on held-out sums against the
// student's ~52%) into a LoRA on tiny-chat, on the arithmetic prompts; the held-out sums score
// both (test/… for the student, teacher/… for the teacher). Several datasets, each with its own
// teacher: datasets='[{"dataset":"arithmetic"},{"dataset":"prompts","teacher":{"base_model":"tiny-chat"}}]'.
import { z } from "zod";
import { inGroup } from "../../src/config/groups.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { runOnPolicyDistillation, type DistillationDataset } from "../../src/distillation/onPolicyTrain.ts";
import { PromptDataset, promptsFromConversations } from "../../src/distillation/promptEnv.ts";
import { TeacherConfigSchema } from "../../src/distillation/teacher.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { arithmeticDatasetBuilder } from "../../src/rl/envs/arithmetic.ts";
import { readConversationFile } from "../../src/supervised/conversationFile.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { overrideDefaults } from "../../src/training/config.ts";

const DEFAULT_TEACHER = { base_model: "tiny-chat-teacher", load_checkpoint_path: null, base_url: null };

const DatasetSchema = z.object({
  dataset: z
    .enum(["arithmetic", "prompts"])
    .default("arithmetic")
    .describe("arithmetic: the math_rl addition prompts (graded, for metrics only); prompts: the last user turn of each conversation in prompts_file"),
  prompts_file: z.string().default(fixtureDataPath("chats_train.jsonl")).describe("Conversation JSONL for dataset=prompts"),
  teacher: TeacherConfigSchema.default(DEFAULT_TEACHER).describe("This dataset's teacher"),
  groups_per_batch: z.number().int().positive().nullable().default(null).describe("Groups of this dataset per batch (default: groups_per_batch)"),
});
type DatasetConfig = z.output<typeof DatasetSchema>;

export const configSchema = overrideDefaults(
  RLConfigSchema.extend({
    ...inGroup("optimizer", {
      kl_penalty_coef: z.number().min(0).default(1).describe("Weight of the teacher KL: advantage = −coef·(lp_student − lp_teacher) per sampled token"),
      kl_discount_factor: z.number().min(0).max(1).default(0).describe("Discount for summing future teacher-KL terms (0 = per token)"),
    }),
    datasets: z
      .array(DatasetSchema)
      .min(1)
      .default([{ dataset: "arithmetic", prompts_file: fixtureDataPath("chats_train.jsonl"), teacher: DEFAULT_TEACHER, groups_per_batch: null }])
      .describe("Prompt sources, each with its own teacher; datums are routed to their dataset's teacher (metrics teacher_kl/dataset_<i>)"),
    max_operand: z.number().int().positive().default(100).describe("arithmetic: operands from 0..max_operand"),
    num_batches: z.number().int().positive().default(1000).describe("arithmetic: length of the synthetic prompt stream"),
    test_problems: z
      .number()
      .int()
      .min(0)
      .default(100)
      .describe("Held-out sums that score the student (test/…) and, once, the first teacher (teacher/…) when dataset 0 is arithmetic (0 = none)"),
    teacher_concurrency: z.number().int().positive().default(64).describe("Teacher logprob requests in flight at once"),
  }),
  {
    log_path: "/tmp/tinker-examples/on_policy_distillation",
    learning_rate: 1e-3,
    max_tokens: 6,
    lora_rank: 8,
    group_size: 4,
    groups_per_batch: 16,
    // 60 steps left teacher_kl at 0.54× its start; 150 end near a quarter of it (docs/distillation.md).
    max_steps: 150,
    eval_every: 10,
    save_every: 10,
  },
);
export type OnPolicyDistillationConfig = z.output<typeof configSchema>;

async function main(config: OnPolicyDistillationConfig, context?: RecipeContext): Promise<void> {
  const tokenizer = await getTokenizer(config.model_name);
  const renderer = getRenderer(resolveRendererName(config.model_name, config.renderer_name), tokenizer);
  const datasets: DistillationDataset[] = config.datasets.map((d: DatasetConfig, i) => {
    const groups = d.groups_per_batch ?? config.groups_per_batch;
    if (d.dataset === "arithmetic") {
      return {
        teacher: d.teacher,
        builder: arithmeticDatasetBuilder({
          renderer,
          batchSize: groups,
          groupSize: config.group_size,
          numBatches: config.num_batches,
          seed: config.seed + i,
          maxOperand: config.max_operand,
          testProblems: i === 0 ? config.test_problems : 0,
        }),
      };
    }
    const prompts = promptsFromConversations(readConversationFile(d.prompts_file).map((r) => r.messages));
    return {
      teacher: d.teacher,
      builder: { build: async () => ({ train: new PromptDataset(prompts, renderer, groups, config.group_size, config.seed + i), test: null }) },
    };
  });
  await runOnPolicyDistillation(
    config,
    datasets,
    { coef: config.kl_penalty_coef, discount: config.kl_discount_factor, teacherConcurrency: config.teacher_concurrency, evaluateTeacher: true },
    { context, decode: (tokens: readonly number[]) => tokenizer.decode(tokens) },
  );
}

export default defineRecipe({
  name: "on_policy_distillation",
  description:
    "On-policy distillation: the student samples, a teacher's per-token log-probs are the reward (default: tiny-chat-teacher into tiny-chat on addition)",
  configSchema,
  main,
});
