// Worker threads do not inherit the parent's module loaders: from the TypeScript sources the W&B
// thread registers tsx first, then imports its entry (workerData.entry).
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
