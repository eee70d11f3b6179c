// The caller's side of the compute worker. `submit` posts a request immediately (so requests run
// in call order) and returns a promise for its result. The worker is unref'd while idle, so an
// engine nobody closed does not keep the process alive, and ref'd while work is pending.
import { Worker } from "node:worker_threads";
import { APIStatusError, InvalidArgumentError, TinkerError } from "../../tinker/errors.ts";
import { collectTransferables, type ResultByOp, type SerializedError, type WorkerInit, type WorkerMessage, type WorkerRequest } from "./protocol.ts";

// From TypeScript sources the worker first registers tsx (bootstrap.mjs); compiled (bundled into
// dist/cookbook.cjs, see scripts/build.mjs), it starts at the entry.js bundled beside it.
const COMPILED = !import.meta.url.endsWith(".ts");
const BOOTSTRAP = COMPILED ? new URL("./entry.js", import.meta.url) : new URL("./bootstrap.mjs", import.meta.url);
const ENTRY = new URL(COMPILED ? "./entry.js" : "./entry.ts", import.meta.url).href;

/** Turns an error record from the worker back into an Error of a matching class. */
export function deserializeError(e: SerializedError): Error {
  let err: Error;
  if (e.status !== undefined) err = new APIStatusError(e.message, e.status, e.body);
  else if (e.name === "InvalidArgumentError") err = new InvalidArgumentError(e.message);
  else if (e.name === "TinkerError") err = new TinkerError(e.message);
  else {
    err = new Error(e.message);
    if (e.name !== "Error") err.name = e.name;
  }
  if (e.stack !== undefined) err.stack = `${err.name}: ${e.message}\n    [in engine worker]\n${e.stack.split("\n").slice(1).join("\n")}`;
  return err;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

export class EngineWorkerHost {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;
  private closed = false;

  constructor(options: { storeDir: string; kernels?: "native" | "reference" }) {
    const init: WorkerInit = { entry: ENTRY, storeDir: options.storeDir, kernels: options.kernels };
    // execArgv [] keeps the test runner's flags out of the worker; the bootstrap registers tsx itself.
    this.worker = new Worker(BOOTSTRAP, { workerData: init, execArgv: [] });
    this.worker.unref();
    this.worker.on("message", (msg: WorkerMessage) => this.onMessage(msg));
    this.worker.on("error", (err: Error) => this.fail(new TinkerError(`embedded engine worker crashed: ${err.message}`, { cause: err })));
    this.worker.on("exit", (code) => {
      if (!this.closed) this.fail(new TinkerError(`embedded engine worker exited unexpectedly with code ${code}`));
    });
  }

  private onMessage(msg: WorkerMessage): void {
    if ("ready" in msg) return;
    const p = this.pending.get(msg.id);
    if (p === undefined) return;
    this.pending.delete(msg.id);
    if (this.pending.size === 0) this.worker.unref();
    if (msg.ok) p.resolve(msg.result);
    else p.reject(deserializeError(msg.error));
  }

  private fail(err: Error): void {
    this.dead ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /**
   * Posts the request now and resolves with its result. Typed arrays inside `req` are transferred
   * (the caller must not reuse them).
   */
  submit<Op extends WorkerRequest["op"]>(req: Extract<WorkerRequest, { op: Op }>): Promise<ResultByOp[Op]> {
    if (this.closed) return Promise.reject(new TinkerError("the embedded engine was closed; create a new service client"));
    if (this.dead !== null) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<ResultByOp[Op]>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ id, req }, collectTransferables(req));
      } catch (err) {
        this.pending.delete(id);
        if (this.pending.size === 0) this.worker.unref();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fail(new TinkerError("the embedded engine was closed while this request was pending"));
    await this.worker.terminate();
  }
}
