// Where runs live by default, and `~` expansion for log_path values.
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `COOKBOOK_LOG_ROOT`, else /tmp/tinker-examples (where the cookbook's recipes log by default). */
export function defaultLogRoot(): string {
  return process.env.COOKBOOK_LOG_ROOT || "/tmp/tinker-examples";
}

/** Expands a leading `~` and makes the path absolute. */
export function expandLogPath(path: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return resolve(path);
}
