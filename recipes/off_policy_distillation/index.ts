// Off-policy distillation (the cookbook's distillation/train_off_policy.py): the student trains on
// fixed prompts and responses, and at every response position the teacher's top
// `n_teacher_targets` tokens are the soft cross_entropy targets (weights = the teacher's
// probabilities renormalised over them). The defaults: tiny-chat learns from tiny-chat-teacher on
// the addition questions of fixtures/data/arithmetic.jsonl (their correct sums as responses), and
// the held-out sums score student (test/…) and teacher (teacher/…) at temperature 1. The teacher
// reads every example once before training (its answers do not change), `teacher_concurrency`
// calls at a time; training is the supervised loop on the soft-target datums.
import { z } from "zod";
import { chatDatasetFields } from "../../src/supervised/datasetSpec.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { TeacherScoreEvaluator } from "../../src/distillation/onPolicyTrain.ts";
import { softTargetBatch } from "../../src/distillation/softTargets.ts";
import { checkTeacher, createTeacher, TeacherConfigSchema } from "../../src/distillation/teacher.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { ARITHMETIC_FEWSHOT, ArithmeticTestDataset } from "../../src/rl/envs/arithmetic.ts";
import { RLTestSetEvaluator } from "../../src/rl/evaluator.ts";
import { conversationToDatum } from "../../src/supervised/common.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { SupervisedDatasetFromRows } from "../../src/supervised/data.ts";
import { main as supervisedMain } from "../../src/supervised/train.ts";
import { readQAJsonl } from "../../src/rl/envs/qaSources.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { overrideDefaults } from "../../src/training/config.ts";
import { samplerSource, withTrainingRun } from "../../src/training/run.ts";
import type { Datum } from "../../src/tinker/types.ts";

export const configSchema = overrideDefaults(
  SupervisedConfigSchema.extend({
    teacher: TeacherConfigSchema.default({ base_model: "tiny-chat-teacher", load_checkpoint_path: null, base_url: null }).describe("The teacher"),
    dataset_path: z.string().default(fixtureDataPath("arithmetic.jsonl")).describe("JSONL of {question, answer}: the fixed prompts and responses"),
    num_examples: z.number().int().positive().default(512).describe("Examples used from dataset_path (the first ones)"),
    n_teacher_targets: z.number().int().positive().default(20).describe("Teacher tokens per position used as soft targets (top-K)"),
    teacher_concurrency: z.number().int().positive().default(64).describe("Teacher requests in flight at once"),
    batch_size: chatDatasetFields.batch_size,
    max_tokens: z.number().int().positive().default(6).describe("Tokens sampled per held-out evaluation answer"),
    test_problems: z.number().int().min(0).default(100).describe("Held-out sums scoring student and teacher (0 = none)"),
  }),
  {
    batch_size: 32,
    log_path: "/tmp/tinker-examples/off_policy_distillation",
    learning_rate: 1e-3,
    lr_schedule: "constant",
    lora_rank: 8,
    num_epochs: 2,
    eval_every: 8,
    save_every: 10,
    print_examples_every: 0,
  },
);
export type OffPolicyDistillationConfig = z.output<typeof configSchema>;

async function main(config: OffPolicyDistillationConfig, context?: RecipeContext): Promise<void> {
  const requires = () => checkTeacher({ baseUrl: config.base_url }, config.teacher, { recipe: "off_policy_distillation", topk: config.n_teacher_targets });
  await withTrainingRun(
    config,
    { context, requires },
    async (run) => {
      const tokenizer = await getTokenizer(config.model_name);
      const renderer = getRenderer(resolveRendererName(config.model_name, config.renderer_name), tokenizer);
      const teacher = await createTeacher(samplerSource(run, config), config.teacher);
      try {
        const rows = readQAJsonl(config.dataset_path).slice(0, config.num_examples);
        const hard: Datum[] = rows.map((r) =>
          conversationToDatum(
            [...ARITHMETIC_FEWSHOT, { role: "user", content: r.question }, { role: "assistant", content: r.answer }],
            renderer,
            null,
            "last_assistant_message",
            "none",
          ),
        );
        run.log.info(`teacher ${config.teacher.base_model}: top-${config.n_teacher_targets} targets for ${hard.length} examples`);
        const soft = await softTargetBatch(
          hard.map(() => teacher.client),
          hard,
          config.n_teacher_targets,
          config.teacher_concurrency,
        );
        const train = new SupervisedDatasetFromRows(soft, config.batch_size, (d) => d);
        const evaluators = [];
        if (config.test_problems > 0) {
          const test = new ArithmeticTestDataset(renderer, config.test_problems, 1);
          evaluators.push(() => new RLTestSetEvaluator(test, config.max_tokens));
          evaluators.push(() => new TeacherScoreEvaluator(teacher.client, new RLTestSetEvaluator(test, config.max_tokens, { name: "teacher" })));
        }
        const result = await supervisedMain(
          config,
          { build: async () => ({ train, test: null }) },
          {
            context,
            session: run.session,
            serviceClient: run.serviceClient,
            runControl: run.control,
            tokenizer,
            evaluatorBuilders: evaluators,
          },
        );
        return { outcome: result.outcome };
      } finally {
        await teacher.close();
      }
    },
    { outcome: "exit" },
  );
}

export default defineRecipe({
  name: "off_policy_distillation",
  description:
    "Off-policy distillation: the student trains on fixed responses with the teacher's top-K tokens as soft targets (default: tiny-chat-teacher into tiny-chat)",
  configSchema,
  main,
});
