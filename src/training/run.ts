// One call that every training loop (and the flat *_loop recipes) runs inside: the service client
// (embedded engine, or the server at base_url) and the run directory (log-dir policy, run.json
// with heartbeat, config.json, logs.log, metrics, SIGUSR1/SIGINT), with the final status recorded
// on every exit path.
import type { RecipeContext } from "../config/recipe.ts";
import type { MetricsLogger, Writable } from "../log/metrics.ts";
import type { RunLog } from "../log/runLog.ts";
import { resolveRendererName } from "../modelInfo.ts";
import type { RunControl } from "../runs/control.ts";
import { withRun, type RunSession } from "../runs/session.ts";
import { createServiceClient } from "../service.ts";
import type { ServiceClient } from "../tinker/clients.ts";
import { checkServerServes } from "./capabilities.ts";
import type { TrainingRunConfig } from "./config.ts";
import type { SamplerSource } from "./reconnectingSampler.ts";
import { ServerLossResumer } from "./serverLoss.ts";

export type TrainingOutcome = "completed" | "already_complete" | "stopped" | "exit";

export interface TrainingRunOptions {
  /** The launching recipe's context (argv, command line, recipe name). */
  context?: RecipeContext;
  /** Recorded in run.json and the training client's metadata when the context has no recipe name. */
  defaultRecipeName?: string;
  /** Where the per-step metrics table goes; false for none. Default stdout. Ignored with `session`. */
  console?: Writable | false;
  /** Default: createServiceClient with config.base_url (closed at the end). */
  serviceClient?: ServiceClient;
  /** A session the caller already started; the run then only trains in it. */
  session?: RunSession;
  /** Polled instead of the session's signal handlers (tests, callers with their own control). */
  runControl?: RunControl;
  /**
   * What else the recipe needs from the server (a teacher's model, top-k prompt logprobs), checked
   * with the base model and LoRA rank before the run directory is touched; throws to refuse.
   */
  requires?: (service: ServiceClient) => Promise<void>;
  /** Called each time the loop is entered (its start and every resume after a server loss), before the body. */
  onEnter?: (run: TrainingContext) => void;
}

/** What a loop gets to train with. */
export interface TrainingContext {
  recipeName: string;
  logDir: string;
  log: RunLog;
  metrics: MetricsLogger;
  control: RunControl;
  session: RunSession;
  serviceClient: ServiceClient;
}

/**
 * Runs `body` in a training run. `body` returns an object with an `outcome`; "stopped" marks the
 * run stopped in run.json, anything else completed. When the person chose "exit" at the log-dir
 * prompt nothing runs and `onExit` is returned.
 */
export async function withTrainingRun<R extends { outcome: TrainingOutcome }>(
  config: TrainingRunConfig,
  options: TrainingRunOptions,
  body: (run: TrainingContext) => Promise<R>,
  onExit: R,
): Promise<R> {
  const recipeName = options.context?.recipeName ?? options.defaultRecipeName ?? "training";
  const ownsService = options.serviceClient === undefined;
  const newServiceClient = () => createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  let serviceClient = options.serviceClient ?? (await newServiceClient());
  const enterOnce = (session: RunSession) => {
    const run: TrainingContext = {
      recipeName,
      logDir: session.logDir,
      log: session.log,
      metrics: session.metrics,
      control: options.runControl ?? session.control,
      session,
      serviceClient,
    };
    options.onEnter?.(run);
    return body(run);
  };
  // On a remote server the run outlives the server: when it goes away, the loop is entered again
  // with a new client once it is back, and resumes from its last checkpoint.
  const enter = async (session: RunSession): Promise<R> => {
    if (!ownsService || serviceClient.probeServer === undefined || config.server_wait_seconds === 0) return enterOnce(session);
    const resumer = new ServerLossResumer({
      logDir: session.logDir,
      baseUrl: config.base_url ?? "the server",
      log: session.log,
      waitMs: config.server_wait_seconds * 1000,
    });
    for (;;) {
      try {
        return await enterOnce(session);
      } catch (err) {
        if (!(await resumer.shouldResume(err, serviceClient))) throw err;
        await serviceClient.close();
        serviceClient = await newServiceClient();
      }
    }
  };
  try {
    if (options.session !== undefined) return await enter(options.session);
    await checkServerServes(serviceClient, {
      model: config.model_name,
      field: "model_name",
      // Weights loaded from a checkpoint bring their own rank.
      ...(config.load_checkpoint_path === null ? { loraRank: config.lora_rank } : {}),
      recipe: recipeName,
    });
    await options.requires?.(serviceClient);
    let result = onExit;
    await withRun(
      {
        logPath: config.log_path,
        recipe: recipeName,
        // config.json records what ran: the recipe and the renderer actually used, not just the overrides.
        config: { recipe_name: recipeName, ...config, renderer_name: resolveRendererName(config.model_name, config.renderer_name) },
        behavior: config.behavior_if_log_dir_exists,
        engine: serviceClient.engineKind,
        tensorboard: config.tensorboard,
        wandbProject: config.wandb_project,
        wandbName: config.wandb_name,
        ...(options.context !== undefined ? { argv: options.context.argv, commandLine: options.context.commandLine } : {}),
        console: options.console ?? process.stdout,
      },
      async (session) => {
        result = await enter(session);
        return result.outcome === "stopped" ? "stopped" : "completed";
      },
    );
    return result;
  } finally {
    if (ownsService) await serviceClient.close();
  }
}

/** The training client's metadata: which recipe and renderer made these weights. */
export function trainingMetadata(run: TrainingContext, rendererName: string | null): Record<string, string> {
  const metadata: Record<string, string> = { recipe_name: run.recipeName };
  if (rendererName !== null) metadata["renderer_name"] = rendererName;
  return metadata;
}

/**
 * Where a run's other samplers (teachers, judges, baselines) come from: its embedded engine, or its
 * server with a reconnecting connection each, waiting as long as the run itself would.
 */
export function samplerSource(run: TrainingContext, config: Pick<TrainingRunConfig, "base_url" | "server_wait_seconds">): SamplerSource {
  return { shared: run.serviceClient, baseUrl: config.base_url, waitMs: config.server_wait_seconds * 1000, log: run.log };
}
