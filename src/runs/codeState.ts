// Which code a training run ran (the cookbook writes the same `code.diff` with every run): the git
// revision of the tinker-cookbook-ts checkout and its uncommitted changes against HEAD (staged and
// unstaged), written to <log_path>/code.diff. An install that is not a git checkout (from npm) gets
// no file, and the config record says why.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { writeFileAtomic } from "../files/durable.ts";
import { PROJECT_ROOT } from "../projectRoot.ts";

export const CODE_DIFF_FILE = "code.diff";

/** What config.json records under `code_state`. */
export type CodeStateRecord =
  | { git_revision: string; repository: string; uncommitted_changes: boolean; untracked_files: number; diff_file: typeof CODE_DIFF_FILE }
  | { git_revision: null; repository: null; note: string };

export interface CodeState {
  record: CodeStateRecord;
  /** The text of code.diff, or null when there is no checkout to describe. */
  diff: string | null;
}

function git(root: string, args: readonly string[]): string {
  // A repository's diff can be large; a slow or stuck git must not hold up the run's start for long.
  return execFileSync("git", ["-C", root, ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
}

function messageOf(err: unknown): string {
  if (err instanceof Error && "stderr" in err && typeof err.stderr === "string" && err.stderr.trim() !== "") return err.stderr.trim().split("\n")[0];
  return err instanceof Error ? err.message : String(err);
}

/** The code state of the checkout holding `root` (default: this install). Never throws. */
export function captureCodeState(root: string = PROJECT_ROOT): CodeState {
  let top: string;
  try {
    top = git(root, ["rev-parse", "--show-toplevel"]).trim();
  } catch (err) {
    return { record: { git_revision: null, repository: null, note: `not in a git checkout (${root}): ${messageOf(err)}` }, diff: null };
  }
  try {
    const revision = git(top, ["rev-parse", "HEAD"]).trim();
    const diff = git(top, ["diff", "--no-color", "--no-ext-diff", "HEAD"]);
    const untracked = git(top, ["ls-files", "--others", "--exclude-standard"])
      .split("\n")
      .filter((line) => line !== "");
    const header = [
      `### repo: ${top} @ ${revision}`,
      ...(untracked.length > 0 ? [`untracked files (not in the diff): ${untracked.join(", ")}`] : []),
      diff === "" ? "(no local changes)" : "-- repo-wide (vs HEAD, staged+unstaged) --",
    ].join("\n");
    return {
      record: { git_revision: revision, repository: top, uncommitted_changes: diff !== "", untracked_files: untracked.length, diff_file: CODE_DIFF_FILE },
      diff: `${header}\n${diff}`,
    };
  } catch (err) {
    // A checkout without a commit yet, or git refusing the folder (safe.directory).
    return { record: { git_revision: null, repository: null, note: `git checkout at ${top} has no readable HEAD: ${messageOf(err)}` }, diff: null };
  }
}

/** Writes code.diff into the run directory when there is a checkout to describe. */
export function writeCodeState(logDir: string, state: CodeState): void {
  if (state.diff !== null) writeFileAtomic(join(logDir, CODE_DIFF_FILE), state.diff, { context: "the run's code.diff" });
}
