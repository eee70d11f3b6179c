// What `wandb_project` / `wandb_name` do for a run: with WANDB_API_KEY set, log each step to W&B
// through the SDK (sink.ts); without it, nothing is sent and the notice says how to upload the
// TensorBoard files later. Either way the run says so: the settings are never silently ignored.
import { DEFAULT_WANDB_BASE_URL, WandbSink } from "./sink.ts";

export { DEFAULT_WANDB_BASE_URL, WandbSink, type WandbSinkOptions } from "./sink.ts";

export interface WandbRequest {
  project: string | null;
  name: string | null;
  /** Used as the W&B run name when wandb_name is not set. */
  defaultName: string;
  /** The folder of the run's TensorBoard files (what `wandb sync` uploads). */
  tensorboardDir: string;
  config: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  onInfo: (message: string) => void;
  onError: (message: string) => void;
}

export interface WandbPlan {
  sink?: WandbSink;
  /** One line for logs.log and the console; undefined when W&B was not asked for. */
  notice?: string;
}

export function syncCommand(project: string, tensorboardDir: string): string {
  return `wandb sync --sync-tensorboard --project ${project} ${tensorboardDir}`;
}

export function planWandb(req: WandbRequest): WandbPlan {
  if (req.project === null) {
    return req.name === null ? {} : { notice: `wandb_name=${req.name} is ignored: set wandb_project too to log to Weights & Biases` };
  }
  const name = req.name ?? req.defaultName;
  const apiKey = req.env["WANDB_API_KEY"] ?? "";
  if (apiKey === "") {
    return {
      notice:
        `wandb_project=${req.project}: WANDB_API_KEY is not set, so nothing is sent to W&B; the metrics go to ${req.tensorboardDir} as TensorBoard events. ` +
        `Upload them with: ${syncCommand(req.project, req.tensorboardDir)} (or set WANDB_API_KEY to log live)`,
    };
  }
  const baseUrl = req.env["WANDB_BASE_URL"] || DEFAULT_WANDB_BASE_URL;
  const entity = req.env["WANDB_ENTITY"] || undefined;
  const sink = new WandbSink({ project: req.project, name, apiKey, baseUrl, entity, config: req.config, onInfo: req.onInfo, onError: req.onError });
  return {
    sink,
    notice: `wandb_project=${req.project}: logging each step to W&B at ${baseUrl} as run "${name}" (TensorBoard files in ${req.tensorboardDir} too)`,
  };
}
