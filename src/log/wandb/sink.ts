// Each step's scalars to Weights & Biases through W&B's own JavaScript SDK (`@wandb/sdk`), used
// when `wandb_project` is set and WANDB_API_KEY is in the environment.
//
// The SDK runs in a worker thread, not in the training process, because of what it does there
// (0.5.1, checked against a fake server in test/log/wandb.test.ts): a server that refuses the run
// (HTTP 403/404 on upsertBucket) makes it throw from a message listener, an uncaught exception
// that would kill the run; and `init` installs SIGINT/SIGTERM handlers that call process.exit(),
// which would cut our own "save and stop" short. In a worker, the first ends the thread only
// (reported once, training goes on) and signals never reach the second.
//
// metrics.jsonl stays the record of truth and the TensorBoard files are written beside this, so
// whatever the SDK fails to upload can still be sent with `wandb sync` (docs/tracking.md).
import type { Worker } from "node:worker_threads";
import { scalarsOf } from "../tensorboard/writer.ts";
import type { Metrics, MetricsSink } from "../metrics.ts";
import type { FromWandbWorker, ToWandbWorker, WandbWorkerInit } from "./protocol.ts";

// Compiled, this module is inside dist/cookbook.cjs and the thread is the wandbWorker.js bundled
// beside it (scripts/build.mjs); from the sources the bootstrap registers tsx first.
const COMPILED = !import.meta.url.endsWith(".ts");
const BOOTSTRAP = new URL(COMPILED ? "./wandbWorker.js" : "./bootstrap.mjs", import.meta.url);
const ENTRY = new URL(COMPILED ? "./wandbWorker.js" : "./worker.ts", import.meta.url).href;

export const DEFAULT_WANDB_BASE_URL = "https://api.wandb.ai";
/** How long the end of a run waits for the last rows to be uploaded. */
export const DEFAULT_FINISH_TIMEOUT_MS = 60_000;

export interface WandbSinkOptions {
  project: string;
  name: string;
  apiKey: string;
  baseUrl?: string;
  entity?: string;
  /** The run's config, shown as the W&B run's config. */
  config?: Record<string, unknown>;
  /** Progress worth a line in logs.log (the run's page, the SDK's own messages). */
  onInfo?: (message: string) => void;
  /** Told once when W&B logging stops early; the run goes on. */
  onError?: (message: string) => void;
  finishTimeoutMs?: number;
}

export class WandbSink implements MetricsSink {
  private readonly worker: Worker;
  private stopped = false;
  private closing: Promise<void> | undefined;
  /** The W&B run's page once the server accepted it. */
  url: string | undefined;

  constructor(private readonly options: WandbSinkOptions) {
    const init: WandbWorkerInit = {
      entry: ENTRY,
      project: options.project,
      name: options.name,
      baseUrl: options.baseUrl ?? DEFAULT_WANDB_BASE_URL,
      apiKey: options.apiKey,
      config: options.config ?? {},
      ...(options.entity !== undefined ? { entity: options.entity } : {}),
    };
    // Loaded here, not at import: every command imports this module (through src/runs), few use
    // W&B, and worker_threads costs a start-up several milliseconds.
    const { Worker: WorkerThread } = process.getBuiltinModule("node:worker_threads");
    this.worker = new WorkerThread(BOOTSTRAP, { workerData: init, execArgv: [] });
    // Uploads must not keep a finished process alive; close() waits for them explicitly.
    this.worker.unref();
    this.worker.on("message", (msg: FromWandbWorker) => this.onMessage(msg));
    this.worker.on("error", (err: Error) => this.stop(`W&B logging stopped: ${err.message}`));
    this.worker.on("exit", (code) => {
      if (code !== 0) this.stop(`W&B logging stopped: the W&B thread exited with code ${code}`);
      this.stopped = true;
    });
  }

  private onMessage(msg: FromWandbWorker): void {
    if (msg.type === "ready") {
      this.url = msg.url;
      this.options.onInfo?.(`W&B: logging to ${msg.url} (project ${this.options.project}, run ${this.options.name})`);
    } else if (msg.type === "console") this.options.onInfo?.(`W&B: ${msg.text}`);
    else if (msg.type === "failed") this.stop(`W&B logging stopped: ${msg.message}`);
  }

  private stop(message: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.options.onError?.(`${message}; metrics.jsonl and the TensorBoard files still hold every step`);
  }

  private post(msg: ToWandbWorker): void {
    if (!this.stopped) this.worker.postMessage(msg);
  }

  write(metrics: Metrics, step: number): void {
    const scalars = scalarsOf(metrics);
    if (scalars.length > 0) this.post({ type: "log", step, scalars: Object.fromEntries(scalars) });
  }

  /** Sends the rows still queued and marks the W&B run finished; waits at most finishTimeoutMs. */
  close(code = 0): Promise<void> {
    this.closing ??= this.finish(code);
    return this.closing;
  }

  private async finish(code: number): Promise<void> {
    if (this.stopped) return;
    this.worker.ref();
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.post({ type: "finish", code });
    const timeoutMs = this.options.finishTimeoutMs ?? DEFAULT_FINISH_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    });
    const late = await Promise.race([exited.then(() => false), timedOut]);
    clearTimeout(timer);
    if (late) {
      this.stop(`W&B upload not finished after ${timeoutMs / 1000}s, given up`);
      await this.worker.terminate();
    }
  }
}
