// A toy recipe that exercises the run plumbing without a model: fits y = a·x + b to noisy points
// by gradient descent and writes a real run directory (metrics, config, run.json, logs,
// checkpoints), honouring log-dir policy, max_steps, resume and the run-control signals.
import { z } from "zod";
import { inGroup, tagGroup } from "../../src/config/groups.ts";
import { LogDirBehaviorSchema, LrScheduleSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { computeScheduleLrMultiplier } from "../../src/hyperparams.ts";
import { withRun } from "../../src/runs/session.ts";
import { type LineState, makeData, meanSquaredError, loadState, saveCheckpoint } from "./line.ts";

export const configSchema = z.object({
  ...inGroup("run", {
    log_path: z.string().default("/tmp/tinker-examples/example_line_fit").describe("Run directory (metrics.jsonl, checkpoints.jsonl, ...)"),
    behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
  }),
  data: z
    .object({
      true_a: z.number().default(2).describe("Slope of the line the points come from"),
      true_b: z.number().default(-1).describe("Intercept of the line the points come from"),
      num_points: z.number().int().min(2).default(64).describe("Number of sample points"),
      noise: z.number().min(0).default(0.1).describe("Standard deviation of the noise added to y"),
      seed: z.number().int().default(0).describe("Seed for x positions and noise"),
    })
    .prefault({})
    .describe("The synthetic data set"),
  ...inGroup("optimizer", {
    learning_rate: z.number().positive().default(0.1).describe("Gradient-descent step size"),
    lr_schedule: LrScheduleSchema.default("constant").describe("Learning-rate schedule over max_steps"),
    max_steps: z.number().int().positive().default(200).describe("Number of gradient steps"),
  }),
  save_every: tagGroup("checkpoints", z.number().int().min(0).default(50).describe("Save a checkpoint every N steps (0 disables)")),
  step_delay_ms: tagGroup("advanced", z.number().min(0).default(0).describe("Pause after each step, to watch or signal a run")),
  console_every: tagGroup("tracking", z.number().int().positive().default(20).describe("Print the metrics table every N steps")),
});
export type LineFitConfig = z.output<typeof configSchema>;

async function main(config: LineFitConfig, context?: RecipeContext): Promise<void> {
  const data = makeData(config.data);
  await withRun(
    {
      logPath: config.log_path,
      recipe: "example_line_fit",
      config,
      behavior: config.behavior_if_log_dir_exists,
      engine: "none",
      argv: context?.argv,
      commandLine: context?.commandLine,
      consoleEvery: config.console_every,
    },
    async (run) => {
      let state: LineState = { a: 0, b: 0 };
      let start = 0;
      if (run.resumed) {
        const resumed = loadState(run.logDir);
        if (resumed) {
          ({ state, step: start } = resumed);
          run.log.info(`resumed from step ${start}`);
        }
      }
      if (start >= config.max_steps) {
        run.log.info("training already complete");
        return "completed";
      }
      for (let step = start; step < config.max_steps; step++) {
        if (run.control.stopRequested) {
          saveCheckpoint(run.logDir, state, step, false);
          return "stopped";
        }
        if (run.control.consumeCheckpointRequest()) saveCheckpoint(run.logDir, state, step, false);
        const t0 = performance.now();
        const lr = config.learning_rate * computeScheduleLrMultiplier(config.lr_schedule, step, config.max_steps);
        const { loss, gradA, gradB } = meanSquaredError(state, data);
        state = { a: state.a - lr * gradA, b: state.b - lr * gradB };
        run.metrics.logMetrics(
          { loss, a: state.a, b: state.b, learning_rate: lr, progress: (step + 1) / config.max_steps, "time/step": (performance.now() - t0) / 1000 },
          step,
        );
        if (config.save_every > 0 && (step + 1) % config.save_every === 0 && step + 1 < config.max_steps) {
          saveCheckpoint(run.logDir, state, step + 1, false);
        }
        if (config.step_delay_ms > 0) await new Promise((r) => setTimeout(r, config.step_delay_ms));
      }
      saveCheckpoint(run.logDir, state, config.max_steps, true);
      run.log.info(`fitted a=${state.a.toFixed(4)} b=${state.b.toFixed(4)}`);
    },
  );
}

export default defineRecipe({
  name: "example_line_fit",
  description: "Toy example: fit y = a·x + b by gradient descent (no model, no engine)",
  configSchema,
  main,
});
