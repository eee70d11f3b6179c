// `cookbook batch <experiment file> [parallel=N] [--no-train] [--no-eval] [--dry-run] [--root dir]`:
// train an experiment's runs in turn, then compare every run and baseline on its test sets
// (comparison.{json,csv,md} and report.html in <root>/<experiment>/). Ctrl-C stops cleanly; the
// same command again carries on.
import { recipes } from "../../recipes/registry.ts";
import { UsageError } from "../config/errors.ts";
import { Batch } from "../experiments/batch.ts";
import { loadExperimentFile } from "../experiments/load.ts";
import { planExperiment } from "../experiments/plan.ts";
import { DEFAULT_EXPERIMENTS_ROOT, experimentDir } from "../experiments/state.ts";
import { createServiceClient } from "../service.ts";
import { defineCommand } from "./types.ts";

interface BatchArgs {
  file?: string;
  args: string[];
  train: boolean;
  eval: boolean;
  dryRun?: boolean;
  parallel?: number;
  root: string;
  prices?: string;
}

/** `parallel=N` among the positional arguments (the seed's spelling), else --parallel. */
function parallelOf(argv: BatchArgs): number {
  let parallel = argv.parallel ?? 1;
  for (const a of argv.args.map(String)) {
    const m = /^parallel=(.*)$/.exec(a);
    if (m === null) throw new UsageError(`unexpected argument "${a}": cookbook batch <file> [parallel=N] [--no-train] [--no-eval] [--dry-run] [--root dir]`);
    parallel = Number(m[1]);
  }
  if (!Number.isInteger(parallel) || parallel < 1) throw new UsageError(`parallel must be a positive integer, got ${JSON.stringify(parallel)}`);
  return parallel;
}

export const batchCommand = defineCommand<BatchArgs>({
  builder: (y) =>
    y
      .positional("file", { type: "string", describe: "experiment file: a .ts module (export default defineExperiment({...})), .json or .yaml" })
      .positional("args", { type: "string", array: true, default: [], describe: "parallel=N: train N runs at once" })
      .option("train", { type: "boolean", default: true, describe: "train the runs (--no-train: evaluate only)" })
      .option("eval", { type: "boolean", default: true, describe: "evaluate after training (--no-eval: train only)" })
      .option("dry-run", {
        type: "boolean",
        describe: "estimate steps, tokens, wall time (and cost for a remote service) from a few measured steps of each run, then exit",
      })
      .option("parallel", { type: "number", describe: "runs trained at the same time (same as parallel=N)" })
      .option("root", { type: "string", default: DEFAULT_EXPERIMENTS_ROOT, describe: "folder of experiments: runs go to <root>/<experiment>/<run>" })
      .option("prices", {
        type: "string",
        describe: 'with --dry-run and a remote base_url: a JSON price table {"<model>": USD per million tokens, "*": default}',
      })
      .parserConfiguration({ "parse-positional-numbers": false }),
  handler: async (argv) => {
    if (!argv.file) throw new UsageError("missing experiment file: cookbook batch <file> (e.g. experiments/example.ts)");
    const parallel = parallelOf(argv);
    const { file, experiment } = await loadExperimentFile(argv.file);
    const plan = await planExperiment(experiment, file, recipes);
    const openService = () => createServiceClient(plan.evalBaseUrl !== null ? { baseUrl: plan.evalBaseUrl } : {});

    if (argv.dryRun) {
      // Loaded only here: estimating is rare next to running.
      const { estimateBatch, formatBatchEstimate } = await import("../experiments/estimate.ts");
      const dir = experimentDir(plan.name, argv.root);
      const estimate = await estimateBatch(plan, {
        root: argv.root,
        runDir: (name) => `${dir}/${name}`,
        train: argv.train,
        eval: argv.eval,
        parallel,
        ...(argv.prices !== undefined ? { prices: argv.prices } : {}),
        // The probe of the evaluation samples on the embedded engine: it must not spend credits.
        openService: (storeDir) => createServiceClient({ baseUrl: "local", engine: { storeDir } }),
        startupSeconds: process.uptime(),
        onProgress: (m) => process.stderr.write(`${m}\n`),
      });
      process.stdout.write(`${formatBatchEstimate(plan, estimate)}\n`);
      return;
    }

    const batch = new Batch(plan, { root: argv.root, train: argv.train, eval: argv.eval, parallel, openService });
    const onInt = (): void => {
      batch.stop();
      // A second Ctrl-C while evaluating: stop now (the eval store keeps every finished example).
      if (batch.stopCount >= 2 && batch.phase === "evaluating") {
        batch.abandon();
        process.stdout.write("evaluation stopped; run the same command again to continue\n");
        process.exit(130);
      }
    };
    // SIGTERM: the runs exit now (two SIGINTs), the batch records that it stopped.
    const onTerm = (): void => {
      batch.stop();
      batch.stop();
    };
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    try {
      process.stdout.write(
        `experiment ${plan.name}: ${plan.runs.length} runs, ${plan.baselines.length} baselines, ${plan.testSets.length} test sets → ${batch.dir}\n`,
      );
      const outcome = await batch.run();
      if (outcome.comparison !== undefined) {
        const { comparisonMarkdown } = await import("../experiments/compare.ts");
        process.stdout.write(`\n${comparisonMarkdown(outcome.comparison)}\n`);
        process.stdout.write(`comparison: ${batch.dir}/comparison.{json,csv,md}\n`);
      }
      process.stdout.write(`report: ${batch.dir}/report.html\n`);
      if (outcome.state.phase === "stopped") {
        process.stdout.write(`batch stopped; run the same command again to continue\n`);
        process.exit(130);
      }
      if (outcome.state.phase === "failed") throw new Error(outcome.state.error ?? "the batch failed");
    } finally {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    }
  },
});
