// Runs on-policy distillation on the RL loop (all three modes): every dataset's groups are
// wrapped so they earn no reward and carry their dataset's tag, and the loop's advantage hook
// replaces the (zero) advantages with −coef·(lp_student − lp_teacher) per sampled token.
import { appendTokenGaps, type TokenGapRecord } from "../log/transcripts/tokenGaps.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { RunLog } from "../log/runLog.ts";
import { chooseEngine, createServiceClient } from "../service.ts";
import type { SamplerSource } from "../training/reconnectingSampler.ts";
import type { RLConfig } from "../rl/config.ts";
import { RLTestSetEvaluator, type EvalContext, type SamplingClientEvaluator } from "../rl/evaluator.ts";
import { main as rlMain, type RLMainOptions, type RLRunResult } from "../rl/train.ts";
import type { AdvantageHook } from "../rl/trainStep.ts";
import type { Metrics, RLDataset, RLDatasetBuilder } from "../rl/types.ts";
import { CompositeDistillationDataset, datasetIndexOf, incorporateTeacherKl } from "./onPolicy.ts";
import { checkTeacher, createTeacher, type Teacher, type TeacherConfig } from "./teacher.ts";

export interface DistillationDataset {
  builder: RLDatasetBuilder;
  teacher: TeacherConfig;
}

export interface OnPolicyOptions {
  /** Weight of the teacher KL in the advantages (the cookbook's kl_penalty_coef). */
  coef: number;
  /** Discount of the summed future KL terms (0 = per token). */
  discount: number;
  /** Teacher calls in flight at once. */
  teacherConcurrency: number;
  /** Also score teacher 0 once on dataset 0's test set (logged as teacher/… at every evaluation). */
  evaluateTeacher: boolean;
}

/** The loop's hook: each datum's dataset comes from its group's `dataset_<i>` tag. */
export function teacherKlHook(teachers: readonly SamplingClient[], options: Pick<OnPolicyOptions, "coef" | "discount" | "teacherConcurrency">): AdvantageHook {
  return (dataD, metadataD, taglistP, info) => {
    const datasetIndexD = metadataD.map((m) => datasetIndexOf(taglistP[m.groupIdx] ?? []));
    const { logPath } = info;
    // The per-token gaps go beside the iteration's transcripts, where the transcripts screen reads them.
    const onTokens = logPath !== undefined ? (records: TokenGapRecord[]) => appendTokenGaps(logPath, info.iteration, records) : undefined;
    return incorporateTeacherKl(dataD, datasetIndexD, teachers, {
      coef: options.coef,
      discount: options.discount,
      concurrency: options.teacherConcurrency,
      onTokens,
      decode: info.decode,
    });
  };
}

/**
 * Reports the teacher's score on the student's test set next to the student's own: the first
 * call rolls the test set out with the teacher, later calls repeat that result.
 */
export class TeacherScoreEvaluator implements SamplingClientEvaluator {
  readonly name = "teacher";
  private cached: Promise<Metrics> | null = null;
  constructor(
    private readonly teacher: SamplingClient,
    private readonly inner: RLTestSetEvaluator,
  ) {}
  evaluate(_student: SamplingClient, _context?: EvalContext): Promise<Metrics> {
    this.cached ??= this.inner.evaluate(this.teacher);
    return this.cached;
  }
}

/**
 * `config` is the loop's config as the recipe parsed it; the loop itself gets it with its own
 * reference-KL penalty off (distillation's coefficient is `options.coef`) and groups_per_batch
 * summed over the datasets.
 */
export async function runOnPolicyDistillation(
  config: RLConfig,
  datasets: readonly DistillationDataset[],
  options: OnPolicyOptions,
  mainOptions: RLMainOptions = {},
): Promise<RLRunResult> {
  if (datasets.length === 0) throw new Error("on-policy distillation needs at least one dataset");
  // On a remote server the loop owns its connection, so it can resume after the server goes away;
  // the teachers keep their own. Embedded, student and teachers share one engine.
  const serverOptions = config.base_url !== null ? { baseUrl: config.base_url } : {};
  const shared = mainOptions.serviceClient ?? (chooseEngine(serverOptions).kind === "embedded" ? await createServiceClient(serverOptions) : null);
  let runLog: RunLog | null = null;
  const source: SamplerSource = {
    shared,
    baseUrl: config.base_url,
    waitMs: config.server_wait_seconds * 1000,
    log: { warn: (message) => (runLog !== null ? runLog.warn(message) : process.stderr.write(`WARNING ${message}\n`)) },
  };
  const teachers: Teacher[] = [];
  try {
    // Refused before any rollout when a teacher's server does not serve its model.
    for (const d of datasets) await checkTeacher(source, d.teacher, { recipe: "on_policy_distillation" });
    for (const d of datasets) teachers.push(await createTeacher(source, d.teacher));
    const built = await Promise.all(datasets.map((d) => d.builder.build()));
    const train = new CompositeDistillationDataset(built.map((b) => b.train));
    const test: RLDataset | null = built[0]?.test ?? null;
    const evaluators: SamplingClientEvaluator[] = [...(mainOptions.evaluators ?? [])];
    if (options.evaluateTeacher && test !== null) {
      evaluators.push(
        new TeacherScoreEvaluator(teachers[0]!.client, new RLTestSetEvaluator(test, config.max_tokens, { name: "teacher", temperature: config.temperature })),
      );
    }
    const groupsPerBatch = train.length > 0 ? train.getBatch(0).length : config.groups_per_batch;
    const loopConfig: RLConfig = { ...config, kl_penalty_coef: 0, kl_discount_factor: 0, groups_per_batch: groupsPerBatch };
    return await rlMain(
      loopConfig,
      { build: async () => ({ train, test }) },
      {
        ...mainOptions,
        ...(shared !== null ? { serviceClient: shared } : {}),
        onEnter: (run) => {
          runLog = run.log;
          mainOptions.onEnter?.(run);
        },
        evaluators,
        advantageHook: teacherKlHook(
          teachers.map((t) => t.client),
          options,
        ),
      },
    );
  } finally {
    for (const t of teachers) await t.close();
    if (mainOptions.serviceClient === undefined) await shared?.close();
  }
}
