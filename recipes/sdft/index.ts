// Self-distillation fine-tuning (the cookbook's sdft.train): the model answers bare questions and
// learns toward itself shown the question with its golden answer (top-K forward KL by default,
// importance sampling with advantage lp_teacher − lp_student when topk=0). The offline default is
// math_rl's addition on tiny-chat, with the demonstration as an earlier exchange of the same
// question. tiny-chat does not use demonstrations (its demonstrated answers score no better than
// its bare ones; docs/distillation.md), so here the run shows the mechanics — teacher_kl falls as
// the student matches its demonstrated self — not a gain in accuracy; with a model that reads
// demonstrations (model_name=Qwen/Qwen3-8B …) the same recipe moves the student toward them.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { SdftTestDataset, sdftPrompts, sdftTestProblems, sdftTrainBatch } from "../../src/distillation/sdftData.ts";
import { SdftConfigSchema, main as sdftMain, type SdftTask } from "../../src/distillation/sdftTrain.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  SdftConfigSchema.extend({
    demo_template: z
      .string()
      .nullable()
      .default(null)
      .describe(
        "How the teacher sees the golden answer: a template with {question} and {golden_answer} (the cookbook's form), or null for an earlier exchange of the same question",
      ),
    max_operand: z.number().int().positive().default(100).describe("Operands of the addition questions are drawn from 0..max_operand"),
    test_problems: z
      .number()
      .int()
      .min(0)
      .default(100)
      .describe("Held-out questions scoring the student (test/…) and the demonstrated teacher (teacher/…); 0 = none"),
  }),
  {
    log_path: "/tmp/tinker-examples/sdft",
    learning_rate: 1e-3,
    lora_rank: 8,
    groups_per_batch: 32,
    group_size: 1,
    max_tokens: 6,
    topk: 20,
    max_steps: 40,
    eval_every: 10,
    save_every: 20,
  },
);
export type SdftRecipeConfig = z.output<typeof configSchema>;

/** math_rl's addition with golden answers: a seeded stream of training pairs and the held-out ones. */
export function additionTask(config: Pick<SdftRecipeConfig, "seed" | "max_operand" | "test_problems" | "demo_template">): SdftTask {
  return {
    trainBatch: (index, size) => sdftTrainBatch(config.seed, index, size, config.max_operand),
    prompts: (problem) => sdftPrompts(problem, config.demo_template),
    testSet: (renderer) => {
      if (config.test_problems === 0) return null;
      const problems = sdftTestProblems(config.test_problems, config.max_operand);
      return {
        student: new SdftTestDataset(renderer, problems),
        teacher: new SdftTestDataset(renderer, problems, { asTeacher: true, template: config.demo_template }),
      };
    },
  };
}

async function main(config: SdftRecipeConfig, context?: RecipeContext): Promise<void> {
  const tokenizer = await getTokenizer(config.model_name);
  const renderer = getRenderer(resolveRendererName(config.model_name, config.renderer_name), tokenizer);
  await sdftMain(config, additionTask(config), renderer, { context });
}

export default defineRecipe({
  name: "sdft",
  description: "Self-distillation fine-tuning: learn toward yourself shown a demonstration (top-K forward KL or importance sampling), on addition",
  configSchema,
  main,
});
