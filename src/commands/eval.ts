// `cookbook eval <model or tinker path or run dir> <benchmark…> [key=value…]`: sample every
// benchmark's examples (resuming an interrupted run), store results in the eval store and print
// a summary table. `cookbook eval --compare A B`: two stored runs example by example.
import { z } from "zod";
import { UsageError } from "../config/errors.ts";
import { parseConfigArgs } from "../config/parse.ts";
import { BenchmarkConfigSchema } from "../eval/benchmark.ts";
import { compareEvalRuns, formatRunComparison } from "../eval/compareRuns.ts";
import { LLMJudge } from "../eval/judge.ts";
import { listBenchmarks } from "../eval/registry.ts";
import type { ProgressUpdate } from "../eval/runner.ts";
import { evaluateModel, openTargetSampler, rendererForModel, resolveEvalTarget } from "../eval/session.ts";
import { EvalStore, defaultEvalStoreDir } from "../eval/store.ts";
import { formatProgressLine, formatSummaryTable } from "../eval/summary.ts";
import { expandLogPath } from "../runs/paths.ts";
import { createServiceClient } from "../service.ts";
import { defineCommand } from "./types.ts";

export const EvalCommandSchema = BenchmarkConfigSchema.extend({
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one)"),
  store: z.string().nullable().default(null).describe("Eval store directory (default: $COOKBOOK_EVAL_DIR or <log root>/evals)"),
  run_id: z.string().nullable().default(null).describe("Resume or create this eval run id"),
  resume: z.boolean().default(true).describe("Resume the newest unfinished eval of the same model and config"),
  judge_model: z.string().nullable().default(null).describe("LLM judge for open-ended benchmarks (qa): a base model or tinker:// path (off by default)"),
  judge_rubric: z.string().nullable().default(null).describe("Judge instructions (default: correct/incorrect against the reference)"),
});

/** Settings of `--compare`. */
export const EvalCompareSchema = z.object({
  store: EvalCommandSchema.shape.store,
  limit: z.number().int().positive().default(20).describe("Changed examples listed per benchmark and direction"),
});

function benchmarkHelp(): string {
  return listBenchmarks()
    .map(({ name, entry }) => `  ${name.padEnd(11)} ${entry.description}\n  ${"".padEnd(11)} ${name}:<source>: ${entry.source}`)
    .join("\n");
}

/** Progress on stderr: a redrawn bar on a terminal, a line every 10% otherwise. */
function progressPrinter(): { update: (u: ProgressUpdate) => void; finish: () => void } {
  const tty = process.stderr.isTTY === true;
  let started = Date.now();
  let startDone = 0;
  let bench = "";
  let lastDecile = -1;
  let drawn = false;
  return {
    update(u) {
      if (u.benchmark !== bench) {
        if (drawn && tty) process.stderr.write("\n");
        bench = u.benchmark;
        started = Date.now();
        startDone = u.done;
        lastDecile = -1;
      }
      const elapsed = (Date.now() - started) / 1000;
      const rate = elapsed > 0.5 ? (u.done - startDone) / elapsed : null;
      const line = formatProgressLine(u, rate);
      if (tty) {
        process.stderr.write(`\r${line}\x1b[K`);
        drawn = true;
      } else {
        const decile = u.total > 0 ? Math.floor((10 * u.done) / u.total) : 10;
        if (decile !== lastDecile) process.stderr.write(`${line}\n`);
        lastDecile = decile;
      }
    },
    finish() {
      if (drawn && tty) process.stderr.write("\n");
      drawn = false;
    },
  };
}

interface EvalArgs {
  model?: string;
  args: string[];
  compare?: string[];
}

export const evalCommand = defineCommand<EvalArgs>({
  builder: (y) =>
    y
      .positional("model", { type: "string", describe: "base model (e.g. tiny-chat), tinker:// path, or a training run directory" })
      .positional("args", { type: "string", array: true, default: [], describe: "benchmarks (name or name:source) and key=value settings" })
      .option("compare", {
        type: "string",
        array: true,
        nargs: 2,
        describe:
          "Compare two stored eval runs (ids or unique prefixes) example by example: regressions and improvements per benchmark (settings: store=, limit=)",
      })
      .parserConfiguration({ "parse-positional-numbers": false, "unknown-options-as-args": true })
      .epilog(
        `Benchmarks:\n${benchmarkHelp()}\n\nSettings (key=value): ${Object.keys(EvalCommandSchema.shape).join(", ")}\nExample: cookbook eval tiny-chat arithmetic gsm8k max_examples=50 num_samples=4\nCompare: cookbook eval --compare <run A> <run B> [limit=20]`,
      ),
  handler: async (argv) => {
    if (argv.compare !== undefined) {
      const ids = argv.compare.map(String);
      if (ids.length !== 2) throw new UsageError("--compare takes two eval run ids: cookbook eval --compare <run A> <run B>");
      const rest = [...(argv.model !== undefined ? [argv.model] : []), ...argv.args.map(String)];
      const stray = rest.filter((a) => !/^[A-Za-z_][\w.]*=/.test(a));
      if (stray.length > 0) throw new UsageError(`--compare takes only store= and limit= besides the two runs; got ${stray.join(" ")}`);
      const settings = parseConfigArgs(EvalCompareSchema, rest);
      const store = new EvalStore(settings.store !== null ? expandLogPath(settings.store) : defaultEvalStoreDir());
      process.stdout.write(`${formatRunComparison(compareEvalRuns(store, ids[0]!, ids[1]!), settings.limit)}\n`);
      return;
    }
    if (!argv.model) throw new UsageError("missing model: cookbook eval <model or tinker path> <benchmark…> [key=value…]");
    const args = argv.args.map(String);
    const specs = args.filter((a) => !/^[A-Za-z_][\w.]*=/.test(a));
    const settings = parseConfigArgs(
      EvalCommandSchema,
      args.filter((a) => /^[A-Za-z_][\w.]*=/.test(a)),
    );
    if (specs.length === 0) throw new UsageError(`name at least one benchmark; known:\n${benchmarkHelp()}`);
    const store = new EvalStore(settings.store !== null ? expandLogPath(settings.store) : defaultEvalStoreDir());
    const service = await createServiceClient(settings.base_url !== null ? { baseUrl: settings.base_url } : {});
    const progress = progressPrinter();
    try {
      let judge: LLMJudge | undefined;
      if (settings.judge_model !== null) {
        const judgeSampler = await openTargetSampler(service, resolveEvalTarget(settings.judge_model));
        const caps = await service.getServerCapabilities().catch(() => null);
        const contextWindow = caps?.supported_models.find((m) => m.model_name === judgeSampler.baseModel)?.max_context_length;
        judge = new LLMJudge({
          samplingClient: judgeSampler,
          ...(contextWindow !== undefined ? { contextWindow } : {}),
          renderer: await rendererForModel(judgeSampler.baseModel, null),
          ...(settings.judge_rubric !== null ? { rubric: settings.judge_rubric } : {}),
        });
      }
      const result = await evaluateModel({
        model: argv.model,
        benchmarks: specs,
        overrides: settings,
        service,
        store,
        rendererName: settings.renderer_name,
        resume: settings.resume,
        ...(settings.run_id !== null ? { runId: settings.run_id } : {}),
        ...(judge !== undefined ? { judge, judgeName: settings.judge_model } : {}),
        onProgress: progress.update,
        onBenchmarkStart: (b, c) =>
          process.stderr.write(
            `${b.name}: ${b.description} (temperature ${c.temperature}, max_tokens ${c.max_tokens}, samples ${c.num_samples}${c.max_examples !== null ? `, first ${c.max_examples}` : ""})\n`,
          ),
      });
      progress.finish();
      const modelLabel = result.run.model_path ?? result.run.model;
      process.stdout.write(`${formatSummaryTable(result.summaries.map((s) => ({ model: modelLabel, benchmark: s.benchmark, metrics: s.metrics })))}\n`);
      process.stdout.write(`${result.resumed ? "resumed" : "saved"} eval run ${result.run.run_id} in ${store.runDir(result.run.run_id)}\n`);
    } finally {
      progress.finish();
      await service.close();
    }
  },
});
