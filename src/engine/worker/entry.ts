// Entry of the engine's compute worker: answers each request from the host in arrival order.
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

port.on("message", (msg: { id: number; req: WorkerRequest }) => {
  let reply: WorkerMessage;
  try {
    reply = { id: msg.id, ok: true, result: session.dispatch(msg.req) };
  } catch (err) {
    reply = { id: msg.id, ok: false, error: serializeError(err) };
  }
  try {
    port.postMessage(reply, reply.ok ? collectTransferables(reply.result) : []);
  } catch (err) {
    port.postMessage({ id: msg.id, ok: false, error: serializeError(err) } satisfies WorkerMessage);
  }
});

port.postMessage({ id: -1, ready: true } satisfies WorkerMessage);
