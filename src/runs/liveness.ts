// Is the run in a directory alive? pid check + heartbeat freshness, falling back to the status the
// run recorded, and for run dirs without run.json (written by the Python cookbook) to file times.
import { existsSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { readCheckpoints } from "./checkpoints.ts";
import { type RunManifest, readManifest } from "./manifest.ts";
import { isPidAlive } from "../files/processes.ts";

export { isPidAlive };

/** A heartbeat older than this means the run is not alive (heartbeats come every ~5 s). */
export const HEARTBEAT_STALE_MS = 30_000;
/** Without run.json, a metrics.jsonl touched this recently counts as running (as RunRegistry). */
export const METRICS_ACTIVE_MS = 120_000;

/**
 * running: live; completed/failed/stopped: as recorded; crashed: run.json says running but its pid
 * is gone; stale: says running, pid exists but no heartbeat for a while (hung, or pid reused);
 * idle: no run.json and no recent writes.
 */
export type DisplayStatus = "running" | "completed" | "failed" | "stopped" | "crashed" | "stale" | "idle";

export interface RunState {
  status: DisplayStatus;
  live: boolean;
  manifest?: RunManifest;
  /** Seconds since the last heartbeat, when there is a manifest. */
  heartbeatAgeSec?: number;
}

export function runState(logDir: string, now = Date.now()): RunState {
  let manifest: RunManifest | undefined;
  try {
    manifest = readManifest(logDir);
  } catch {
    manifest = undefined;
  }
  if (!manifest) return { status: legacyStatus(logDir, now), live: false };
  const heartbeatAgeSec = Math.max(0, (now - Date.parse(manifest.heartbeat_at)) / 1000);
  if (manifest.status !== "running") return { status: manifest.status, live: false, manifest, heartbeatAgeSec };
  const fresh = heartbeatAgeSec * 1000 < HEARTBEAT_STALE_MS;
  // On another host the pid means nothing here; trust the heartbeat alone.
  const sameHost = manifest.host === hostname();
  const pidAlive = sameHost ? isPidAlive(manifest.pid) : fresh;
  if (pidAlive && fresh) return { status: "running", live: true, manifest, heartbeatAgeSec };
  return { status: pidAlive ? "stale" : "crashed", live: false, manifest, heartbeatAgeSec };
}

function legacyStatus(logDir: string, now: number): DisplayStatus {
  try {
    if (readCheckpoints(logDir).some((c) => c.final === true)) return "completed";
  } catch {
    // A malformed checkpoints.jsonl says nothing about completion.
  }
  const metrics = join(logDir, "metrics.jsonl");
  if (existsSync(metrics) && now - statSync(metrics).mtimeMs < METRICS_ACTIVE_MS) return "running";
  return "idle";
}
