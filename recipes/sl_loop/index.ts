// Supervised fine-tuning in one flat loop, to be read top to bottom: no pipelining, no
// evaluators, no dataset abstraction. Each step renders a batch of conversations, runs
// forward_backward and optim_step, waits for both, and logs the loss. The pipelined version of
// the same thing is src/supervised/train.ts (used by sl_basic and chat_sl).
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { seededShuffle } from "../../src/data/shuffle.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { computeMeanNll, conversationToDatum } from "../../src/supervised/common.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { readConversationFile } from "../../src/supervised/conversationFile.ts";
import { chatDatasetFields } from "../../src/supervised/datasetSpec.ts";
import { modelInputLength } from "../../src/tinker/modelInput.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { CheckpointManager } from "../../src/training/checkpoints.ts";
import { adamParams, adapterFields, checkpointFields, optimizerFields, overrideDefaults, runFields } from "../../src/training/config.ts";
import { openTrainingClient } from "../../src/training/open.ts";
import { withTrainingRun, type TrainingOutcome } from "../../src/training/run.ts";

// The training core's shared fields plus the few this loop reads, taken from the supervised loop's and the chat dataset's schemas.
const loop = SupervisedConfigSchema.shape;
export const configSchema = overrideDefaults(
  z.object({
    ...runFields,
    ...adapterFields,
    ...checkpointFields,
    ...optimizerFields,
    dataset: chatDatasetFields.dataset,
    batch_size: chatDatasetFields.batch_size,
    max_length: chatDatasetFields.max_length,
    train_on_what: chatDatasetFields.train_on_what,
    max_steps: loop.max_steps,
  }),
  {
    log_path: "/tmp/tinker-examples/sl_loop",
    dataset: fixtureDataPath("chats_train.jsonl"),
    batch_size: 32,
    learning_rate: 2e-3,
    max_length: 512,
    train_on_what: "all_assistant_messages",
    max_steps: 40,
  },
);
export type SlLoopConfig = z.output<typeof configSchema>;

async function main(config: SlLoopConfig, context?: RecipeContext): Promise<void> {
  await withTrainingRun<{ outcome: TrainingOutcome }>(
    config,
    { context },
    async (run) => {
      // 1. Tokenizer and chat format.
      const tokenizer = await getTokenizer(config.model_name);
      const rendererName = resolveRendererName(config.model_name, config.renderer_name);
      const renderer = getRenderer(rendererName, tokenizer);
      run.log.info(`renderer: ${rendererName}`);

      // 2. Data: every conversation of the file, shuffled once with a fixed seed.
      const conversations = seededShuffle(readConversationFile(config.dataset), 0);
      const nBatches = Math.floor(conversations.length / config.batch_size);
      if (nBatches === 0) throw new Error(`${config.dataset}: ${conversations.length} conversations make no batch of ${config.batch_size}`);
      const endBatch = config.max_steps !== null ? Math.min(config.max_steps, nBatches) : nBatches;

      // 3. A training client: resumed (with its optimizer state) from the last checkpoint, or new.
      const { trainingClient, startStep: startBatch } = await openTrainingClient(run, config, { rendererName });
      if (startBatch >= endBatch) return { outcome: "already_complete" };
      const checkpoints = new CheckpointManager(trainingClient, config, { logDir: run.logDir, restClient: run.serviceClient.createRestClient(), log: run.log });

      // 4. The loop. A checkpoint taken at the top of a step holds the weights before it, so it
      //    records this step's batch as the one to train next.
      for (let batch = startBatch; batch < endBatch; batch++) {
        const t0 = performance.now();
        const wantSave = (checkpoints.isPeriodic(batch) && batch > startBatch) || run.control.consumeCheckpointRequest();
        if (wantSave || run.control.stopRequested) await checkpoints.save(batch, { batch });
        if (run.control.stopRequested) return { outcome: "stopped" };

        const learningRate = config.learning_rate * (1 - batch / endBatch);
        const rows = conversations.slice(batch * config.batch_size, (batch + 1) * config.batch_size);
        const data = rows.map((row) => conversationToDatum(row.messages, renderer, config.max_length, config.train_on_what ?? "all_assistant_messages"));

        const fwdBwdFuture = await trainingClient.forwardBackward(data, "cross_entropy");
        const optimFuture = await trainingClient.optimStep(adamParams(config, learningRate));
        const fwdBwd = await fwdBwdFuture.result();
        await optimFuture.result();

        const logprobs = fwdBwd.loss_fn_outputs.map((o) => o["logprobs"]!);
        const weights = data.map((d) => d.loss_fn_inputs["weights"]!);
        run.metrics.logMetrics(
          {
            num_sequences: data.length,
            num_tokens: data.reduce((n, d) => n + modelInputLength(d.model_input), 0),
            learning_rate: learningRate,
            train_mean_nll: computeMeanNll(logprobs, weights),
            progress: (batch + 1) / endBatch,
            "time/total": (performance.now() - t0) / 1000,
          },
          batch,
        );
      }

      // 5. The final weights, kept without a time limit.
      await checkpoints.saveFinal({ batch: endBatch });
      return { outcome: "completed" };
    },
    { outcome: "exit" },
  );
}

export default defineRecipe({
  name: "sl_loop",
  description: "Supervised fine-tuning as one flat, unpipelined loop written to be read",
  configSchema,
  main,
});
