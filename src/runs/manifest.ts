// run.json: who is running in this directory (recipe, argv, pid, host, engine), its status, and a
// heartbeat refreshed while it runs, so watchers can tell a live run from a crashed one.
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { writeJsonAtomic } from "../files/durable.ts";

export const RunStatusSchema = z.enum(["running", "completed", "failed", "stopped"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const RunManifestSchema = z.looseObject({
  recipe: z.string(),
  argv: z.array(z.string()),
  command: z.string().optional(),
  pid: z.number().int(),
  host: z.string(),
  cwd: z.string().optional(),
  started_at: z.string(),
  engine: z.string(),
  status: RunStatusSchema,
  heartbeat_at: z.string(),
  ended_at: z.string().optional(),
  error: z.string().optional(),
});
export type RunManifest = z.infer<typeof RunManifestSchema>;

export const MANIFEST_FILE = "run.json";
export const DEFAULT_HEARTBEAT_MS = 5_000;

export function manifestPath(logDir: string): string {
  return join(logDir, MANIFEST_FILE);
}

/**
 * Replaces run.json atomically (temp file + rename) so readers never see half of it; on a full
 * disk the old run.json stays, no temp file is left, and the error names the file.
 */
export function writeManifest(logDir: string, manifest: RunManifest): void {
  writeJsonAtomic(manifestPath(logDir), manifest, { context: `run status "${manifest.status}"` });
}

/** run.json of a directory, or undefined when there is none. Throws naming the file when invalid. */
export function readManifest(logDir: string): RunManifest | undefined {
  const path = manifestPath(logDir);
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${path}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = RunManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: invalid run manifest at ${issue.path.join(".") || "top level"} (${issue.message})`);
  }
  return parsed.data;
}

export interface ManifestInit {
  recipe: string;
  argv: readonly string[];
  command?: string;
  engine: string;
}

export interface ManifestHandle {
  readonly manifest: RunManifest;
  /**
   * Records the final status (once; later calls are ignored) and stops the heartbeat. Never
   * throws: when run.json cannot be written (a full disk) it says so in one line on stderr, since
   * it runs on exit paths where the run's own error is the one that matters.
   */
  finish(status: Exclude<RunStatus, "running">, error?: string): void;
  /** Writes a fresh heartbeat now (a failure is reported once on stderr, never thrown). */
  beat(): void;
}

type Warn = (message: string) => void;
const stderrWarn: Warn = (message) => process.stderr.write(`${message}\n`);

/**
 * Writes run.json with status running and keeps its heartbeat fresh on an unref'd timer. If the
 * process exits without finish() (process.exit somewhere), the exit hook records "failed".
 */
export function startManifest(logDir: string, init: ManifestInit, heartbeatMs = DEFAULT_HEARTBEAT_MS, warn: Warn = stderrWarn): ManifestHandle {
  const now = new Date().toISOString();
  const manifest: RunManifest = {
    recipe: init.recipe,
    argv: [...init.argv],
    pid: process.pid,
    host: hostname(),
    cwd: process.cwd(),
    started_at: now,
    engine: init.engine,
    status: "running",
    heartbeat_at: now,
  };
  if (init.command !== undefined) manifest.command = init.command;
  writeManifest(logDir, manifest);
  let finished = false;
  let beatFailed = false;
  const beat = (): void => {
    if (finished) return;
    manifest.heartbeat_at = new Date().toISOString();
    try {
      writeManifest(logDir, manifest);
      beatFailed = false;
    } catch (err) {
      // A heartbeat runs on a timer: throwing would crash the run over a status file.
      if (!beatFailed) warn(`cookbook: heartbeat not recorded: ${err instanceof Error ? err.message : String(err)}`);
      beatFailed = true;
    }
  };
  const timer = setInterval(beat, heartbeatMs);
  timer.unref();
  const finish = (status: Exclude<RunStatus, "running">, error?: string): void => {
    if (finished) return;
    finished = true;
    clearInterval(timer);
    process.off("exit", onExit);
    manifest.status = status;
    manifest.heartbeat_at = manifest.ended_at = new Date().toISOString();
    if (error !== undefined) manifest.error = error;
    try {
      writeManifest(logDir, manifest);
    } catch (err) {
      warn(`cookbook: run status "${status}" not recorded: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const onExit = (code: number): void => finish("failed", `process exited (code ${code}) before the run finished`);
  process.on("exit", onExit);
  return { manifest, finish, beat };
}
