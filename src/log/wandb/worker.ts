// The W&B thread: `@wandb/sdk` logs each step sent by the run and uploads it to the W&B server
// (WANDB_BASE_URL, default the hosted API). Whatever the SDK prints comes back to the run as
// `console` messages with the API key masked; anything it throws ends this thread only.
import { parentPort, workerData } from "node:worker_threads";
import type { FromWandbWorker, ToWandbWorker, WandbWorkerInit } from "./protocol.ts";

const init = workerData as WandbWorkerInit;
const port = parentPort;
if (port === null) throw new Error("src/log/wandb/worker.ts runs as a worker thread (see sink.ts)");
const post = (msg: FromWandbWorker): void => port.postMessage(msg);

/** The key, and the Basic credentials built from it, never leave this thread unmasked. */
function mask(text: string): string {
  const secrets = [init.apiKey, Buffer.from(`api:${init.apiKey}`).toString("base64")].filter((s) => s.length >= 4);
  return secrets.reduce((t, s) => t.split(s).join("***"), text);
}

function say(...args: unknown[]): void {
  const text = args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : String(a))).join(" ");
  // The SDK prints whole GraphQL errors (the response, then the query text); what failed comes first.
  const head = text.split("\n")[0]!.replace(/: \{"response".*$/, "");
  post({ type: "console", text: mask(head.slice(0, 400)) });
}
console.log = say;
console.info = say;
console.warn = say;
console.error = say;

const { default: wandb } = await import("@wandb/sdk");
try {
  const run = await wandb.init({
    project: init.project,
    name: init.name,
    ...(init.entity !== undefined ? { entity: init.entity } : {}),
    config: init.config,
    settings: { baseUrl: init.baseUrl, apiKey: init.apiKey, silent: true },
  });
  post({ type: "ready", url: run.url(), id: run.id });
} catch (err) {
  post({ type: "failed", message: mask((err as Error).message) });
  process.exit(1);
}

port.on("message", (msg: ToWandbWorker) => {
  if (msg.type === "log") wandb.log(msg.scalars, msg.step);
  else
    void wandb.finish(msg.code).then(
      () => {
        post({ type: "finished" });
        process.exit(0);
      },
      (err: Error) => {
        post({ type: "failed", message: mask(err.message) });
        process.exit(1);
      },
    );
});
