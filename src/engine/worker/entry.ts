// Entry of the engine's compute worker: answers each request from the host in arrival order
// (sample requests excepted: they are answered when their batched decoding finishes).
// Results are posted with their typed arrays transferred (the session hands out fresh copies, so
// nothing the worker still uses is detached).
import { parentPort, workerData } from "node:worker_threads";
import { EngineSession } from "./session.ts";
import { collectTransferables, type SerializedError, type WorkerInit, type WorkerMessage, type WorkerRequest } from "./protocol.ts";

const init = workerData as WorkerInit;
const port = parentPort;
if (port === null) throw new Error("engine worker entry must run inside a worker thread");
const session = new EngineSession(init.storeDir, init.kernels);

function serializeError(err: unknown): SerializedError {
  if (err instanceof Error) {
    const extra = err as Error & { status?: unknown; body?: unknown };
    return {
      name: err.name,
      message: err.message,
      stack: err.stack,
      status: typeof extra.status === "number" ? extra.status : undefined,
      body: extra.body,
    };
  }
  return { name: "Error", message: String(err) };
}

type Reply = Exclude<WorkerMessage, { ready: true }>;

function post(reply: Reply): void {
  try {
    port!.postMessage(reply, reply.ok ? collectTransferables(reply.result) : []);
  } catch (err) {
    port!.postMessage({ id: reply.id, ok: false, error: serializeError(err) } satisfies WorkerMessage);
  }
}

port.on("message", (msg: { id: number; req: WorkerRequest }) => {
  let result: unknown;
  try {
    result = session.dispatch(msg.req);
  } catch (err) {
    post({ id: msg.id, ok: false, error: serializeError(err) });
    return;
  }
  // Sample and compute_logprobs requests settle later (the decode scheduler batches them across ticks).
  if (result instanceof Promise) {
    result.then(
      (r: unknown) => post({ id: msg.id, ok: true, result: r }),
      (err: unknown) => post({ id: msg.id, ok: false, error: serializeError(err) }),
    );
    return;
  }
  post({ id: msg.id, ok: true, result });
});

port.postMessage({ id: -1, ready: true } satisfies WorkerMessage);
