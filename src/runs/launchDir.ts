// Where a run launched from the UI goes when its log_path already holds something: a fresh
// sibling name, the same directory (resume), or the same directory after a guarded delete. The
// launched child then always resumes, because its stdout file already sits in the directory.
import { assertNoLiveWriter } from "./runLock.ts";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { deleteRunDir } from "./logDir.ts";
import { expandLogPath } from "./paths.ts";

export type ExistingDirChoice = "resume" | "delete" | "new";

export const EXISTING_DIR_CHOICES: readonly ExistingDirChoice[] = ["new", "resume", "delete"];

/** `dir`, or `dir-2`, `dir-3`… the first that does not exist yet. */
export function freshName(dir: string): string {
  if (!existsSync(dir)) return dir;
  for (let i = 2; ; i++) {
    const candidate = `${dir}-${i}`;
    if (!existsSync(candidate)) return candidate;
  }
}

/** Whether `dir` exists and holds anything (a launch into it must choose what to do). */
export function hasContent(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/**
 * Applies the choice and returns the directory the run will use, created. `delete` refuses a
 * live run or anything that is not a run directory (deleteRunDir's checks).
 */
export function prepareLaunchDir(logPath: string, choice: ExistingDirChoice): string {
  let dir = expandLogPath(logPath);
  if (hasContent(dir)) {
    // A directory a live run still writes to is refused here (RunLockedError naming its pid):
    // the child's own refusal would only reach its stdout.log.
    if (choice !== "new") assertNoLiveWriter(dir);
    if (choice === "delete") deleteRunDir(dir);
    else if (choice === "new") dir = freshName(dir);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}
