// Worker threads do not inherit the parent's module loaders, so a worker written in TypeScript
// first registers tsx and then imports its real entry module (passed in workerData.entry).
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
