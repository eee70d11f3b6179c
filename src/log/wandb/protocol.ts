// Messages between a run and the thread that holds W&B's JavaScript SDK (see sink.ts for why the
// SDK runs in its own thread).

export interface WandbWorkerInit {
  /** Module the bootstrap imports (worker.ts, or worker.js once compiled). */
  entry: string;
  project: string;
  /** Display name of the W&B run. */
  name: string;
  entity?: string;
  baseUrl: string;
  apiKey: string;
  config: Record<string, unknown>;
}

export type ToWandbWorker = { type: "log"; step: number; scalars: Record<string, number> } | { type: "finish"; code: number };

export type FromWandbWorker =
  | { type: "ready"; url: string; id: string }
  | { type: "console"; text: string }
  | { type: "failed"; message: string }
  | { type: "finished" };
