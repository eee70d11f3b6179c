// The prompted teacher of the offline default. tiny-chat was never trained on instructions: with
// the classifier system prompt it still answers the question (measured: 0 of 100 held-out prompts
// classified). So the recipe's first stage teaches it to obey that one system prompt — a short
// LoRA fine-tune on (system prompt + question → category) mixed with plain chats without the
// prompt, so the behaviour is tied to the prompt — and the result plays the part of an
// instruction-following teacher. With `teacher` set in the config this stage is skipped.
import type { Renderer } from "../../src/renderers/base.ts";
import type { Message } from "../../src/renderers/types.ts";
import { conversationToDatum } from "../../src/supervised/common.ts";
import type { TrainingClient } from "../../src/tinker/clients.ts";
import { adamParams, type OptimizerConfig } from "../../src/training/config.ts";

export interface TeacherTrainingOptions {
  steps: number;
  batchSize: number;
  /** Adam, at the peak learning rate of the linear decay. */
  optimizer: OptimizerConfig;
  maxLength: number;
  /** Called every 10 steps and at the end with the mean per-example loss. */
  onProgress?: (step: number, loss: number) => void;
}

/**
 * Trains `client` for `steps` steps, half of each batch `prompted` conversations (the system
 * prompt, a question, the wanted answer), half `plain` ones; linear learning-rate decay.
 */
export async function trainPromptedTeacher(
  client: TrainingClient,
  renderer: Renderer,
  prompted: readonly Message[][],
  plain: readonly Message[][],
  options: TeacherTrainingOptions,
): Promise<void> {
  if (prompted.length === 0) throw new Error("prompted teacher: no prompted conversations to train on");
  const half = Math.max(1, Math.floor(options.batchSize / 2));
  for (let step = 0; step < options.steps; step++) {
    const data = [];
    for (let i = 0; i < half; i++) {
      data.push(conversationToDatum(prompted[(step * half + i) % prompted.length]!, renderer, options.maxLength));
      if (plain.length > 0) data.push(conversationToDatum(plain[(step * half + i) % plain.length]!, renderer, options.maxLength));
    }
    const fb = await client.forwardBackward(data, "cross_entropy");
    const opt = await client.optimStep(adamParams(options.optimizer, options.optimizer.learning_rate * (1 - step / options.steps)));
    const out = await fb.result();
    await opt.result();
    if (options.onProgress !== undefined && (step % 10 === 0 || step === options.steps - 1)) {
      options.onProgress(step, (out.metrics["loss:sum"] ?? Number.NaN) / data.length);
    }
  }
}
