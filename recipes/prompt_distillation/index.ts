// Prompt distillation (the cookbook's prompt_distillation): a teacher reading a long system
// prompt labels prompts into labels.jsonl; the student is fine-tuned on the labels without the
// system prompt (the supervised loop); test/agreement — the student without the prompt giving
// exactly the prompted teacher's answer on held-out prompts — is measured before training (step
// 0) and every eval_every steps. The default task classifies tiny-chat's own questions into 8
// categories (task.ts), like the cookbook's language-identification prompt. tiny-chat cannot
// follow instructions, so unless `teacher` names one, a first stage teaches a LoRA of it to obey
// this system prompt (teacher.ts); that LoRA, prompted, is the teacher.
import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { chatDatasetFields } from "../../src/supervised/datasetSpec.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { seededShuffle } from "../../src/data/shuffle.ts";
import {
  AgreementEvaluator,
  agreement,
  greedyAnswers,
  labelledConversation,
  singleTurnPrompts,
  writeConversationsJsonl,
} from "../../src/distillation/promptDistillation.ts";
import { createTeacher, type Teacher, TeacherConfigSchema } from "../../src/distillation/teacher.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import type { Message } from "../../src/renderers/types.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { readConversationFile } from "../../src/supervised/conversationFile.ts";
import { FromConversationFileBuilder } from "../../src/supervised/data.ts";
import { main as supervisedMain } from "../../src/supervised/train.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { LoraRankSchema, overrideDefaults } from "../../src/training/config.ts";
import { writeJsonAtomic } from "../../src/files/durable.ts";
import { samplerSource, withTrainingRun, type TrainingContext } from "../../src/training/run.ts";
import { CLASSIFY_SYSTEM_PROMPT, categoryOf, promptText, splitPrompts } from "./task.ts";
import { trainPromptedTeacher } from "./teacher.ts";

export const configSchema = overrideDefaults(
  SupervisedConfigSchema.extend({
    teacher: TeacherConfigSchema.nullable()
      .default(null)
      .describe("The prompted teacher (null: stage 1 teaches a LoRA of model_name to follow system_prompt and uses that)"),
    system_prompt: z.string().min(1).default(CLASSIFY_SYSTEM_PROMPT).describe("The teacher's long system prompt (the student never sees it)"),
    prompts_files: z
      .array(z.string())
      .min(1)
      .default([fixtureDataPath("persona_train.jsonl"), fixtureDataPath("persona_test.jsonl")])
      .describe("Conversation JSONL files whose user messages are the prompts"),
    prompts_per_category: z
      .number()
      .int()
      .positive()
      .default(60)
      .describe("Prompts kept per category of the default task; a quarter (at least one) is held out"),
    label_max_tokens: z.number().int().positive().default(12).describe("Maximum tokens of a teacher label / student answer"),
    sampling_concurrency: z.number().int().positive().default(32).describe("Labelling and evaluation requests in flight at once"),
    batch_size: chatDatasetFields.batch_size,
    max_length: z.number().int().positive().default(512).describe("Truncate examples to this many tokens"),
    teacher_sft_steps: z.number().int().min(1).default(40).describe("Stage 1 (no `teacher`): steps teaching the teacher to follow system_prompt"),
    teacher_learning_rate: z.number().positive().default(5e-3).describe("Stage 1 learning rate (linear decay)"),
    teacher_lora_rank: LoraRankSchema.default(16).describe("Stage 1 LoRA rank (a power of two)"),
    plain_chats_file: z
      .string()
      .default(fixtureDataPath("chats_train.jsonl"))
      .describe("Stage 1: chats without the system prompt, mixed in so the teacher only obeys when prompted"),
  }),
  { batch_size: 16, log_path: "/tmp/tinker-examples/prompt_distillation", learning_rate: 5e-3, lora_rank: 16, num_epochs: 4, eval_every: 10, save_every: 20 },
);
export type PromptDistillationConfig = z.output<typeof configSchema>;

const TEACHER_FILE = "prompted_teacher.json";

/** Stage 1, or the stage-1 teacher of an earlier attempt of this run (its sampler path is kept in the run directory). */
async function promptedTeacher(
  run: TrainingContext,
  config: PromptDistillationConfig,
  renderer: Renderer,
  train: Message[][],
): Promise<Teacher | SamplingClient> {
  if (config.teacher !== null) return createTeacher(samplerSource(run, config), config.teacher);
  const file = path.join(run.logDir, TEACHER_FILE);
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { sampler_path?: unknown };
    if (typeof saved.sampler_path !== "string") throw new Error(`${file}: expected {"sampler_path": "tinker://…"}`);
    run.log.info(`stage 1: reusing the prompted teacher ${saved.sampler_path}`);
    return run.serviceClient.createSamplingClient({ modelPath: saved.sampler_path });
  }
  const client = await run.serviceClient.createLoraTrainingClient(config.model_name, {
    rank: config.teacher_lora_rank,
    seed: config.seed,
    userMetadata: { recipe_name: run.recipeName, role: "prompted_teacher" },
  });
  const system: Message = { role: "system", content: config.system_prompt };
  const prompted = train.map((p) => [system, ...labelledConversation(p, categoryOf(promptText(p)))]);
  const plain = readConversationFile(config.plain_chats_file).map((r) => r.messages);
  run.log.info(`stage 1: teaching ${config.model_name} to follow the system prompt (${config.teacher_sft_steps} steps)`);
  await trainPromptedTeacher(client, renderer, prompted, plain, {
    steps: config.teacher_sft_steps,
    batchSize: config.batch_size,
    optimizer: { ...config, learning_rate: config.teacher_learning_rate },
    maxLength: config.max_length,
    onProgress: (step, loss) => run.log.info(`stage 1 step ${step}: loss ${loss.toFixed(4)}`),
  });
  const saved = await (await client.saveWeightsForSampler("prompted_teacher")).result();
  writeJsonAtomic(file, { sampler_path: saved.path });
  return client.createSamplingClient(saved.path);
}

/** The teacher's answers (with the system prompt) to `prompts`, cached in `file` as labelled conversations. */
async function teacherLabels(
  run: TrainingContext,
  file: string,
  teacher: SamplingClient,
  renderer: Renderer,
  config: PromptDistillationConfig,
  prompts: Message[][],
): Promise<string[]> {
  if (fs.existsSync(file)) {
    const rows = readConversationFile(file).map((r) => r.messages);
    if (rows.length === prompts.length && rows.every((m, i) => promptText(m.slice(0, -1)) === promptText(prompts[i]!))) {
      return rows.map((m) => String(m[m.length - 1]!.content));
    }
    run.log.warn(`${file} does not match the prompts of this configuration; labelling again`);
  }
  const answers = await greedyAnswers(teacher, renderer, [{ role: "system", content: config.system_prompt }], prompts, {
    maxTokens: config.label_max_tokens,
    concurrency: config.sampling_concurrency,
  });
  writeConversationsJsonl(
    file,
    prompts.map((p, i) => labelledConversation(p, answers[i]!)),
  );
  return answers;
}

async function main(config: PromptDistillationConfig, context?: RecipeContext): Promise<void> {
  await withTrainingRun(
    config,
    { context },
    async (run) => {
      const tokenizer = await getTokenizer(config.model_name);
      const rendererName = resolveRendererName(config.model_name, config.renderer_name);
      const renderer = getRenderer(rendererName, tokenizer);
      const pool = singleTurnPrompts(config.prompts_files.flatMap((f) => readConversationFile(f).map((r) => r.messages)));
      const { train, eval: held } = splitPrompts(pool, config.prompts_per_category, (xs) => seededShuffle(xs, config.seed));
      run.log.info(`prompts: ${train.length} to label for training, ${held.length} held out`);
      const prompted = await promptedTeacher(run, config, renderer, train);
      const teacher = "client" in prompted ? prompted.client : prompted;
      const labelsFile = path.join(run.logDir, "labels.jsonl");
      let trainLabels: string[];
      let heldLabels: string[];
      try {
        trainLabels = await teacherLabels(run, labelsFile, teacher, renderer, config, train);
        heldLabels = await teacherLabels(run, path.join(run.logDir, "held_out_labels.jsonl"), teacher, renderer, config, held);
      } finally {
        // All its answers are written before training starts: a teacher of its own is not kept for the run.
        if ("close" in prompted) await prompted.close();
      }
      const truth = held.map((p) => categoryOf(promptText(p)));
      if (config.system_prompt === CLASSIFY_SYSTEM_PROMPT) {
        run.log.info(
          `teacher with the system prompt: ${(agreement(heldLabels, truth).agreement * 100).toFixed(1)}% of held-out prompts classified correctly; ${trainLabels.length} training labels in ${labelsFile}`,
        );
      }
      const builder = new FromConversationFileBuilder({
        common: {
          model_name_for_tokenizer: config.model_name,
          renderer_name: rendererName,
          max_length: config.max_length,
          batch_size: config.batch_size,
          train_on_what: "last_assistant_message",
        },
        filePath: labelsFile,
        shuffleSeed: config.seed,
      });
      const evaluator = new AgreementEvaluator({
        renderer,
        prompts: held,
        teacherAnswers: heldLabels,
        maxTokens: config.label_max_tokens,
        concurrency: config.sampling_concurrency,
      });
      const result = await supervisedMain(config, builder, {
        context,
        session: run.session,
        serviceClient: run.serviceClient,
        runControl: run.control,
        tokenizer,
        evaluatorBuilders: [() => evaluator],
      });
      return { outcome: result.outcome };
    },
    { outcome: "exit" },
  );
}

export default defineRecipe({
  name: "prompt_distillation",
  description:
    "Prompt distillation: a teacher with a long system prompt labels prompts; the student learns the behaviour without the prompt (default: classify tiny-chat's questions)",
  configSchema,
  main,
});
