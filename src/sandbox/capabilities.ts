// What this machine lets the sandbox apply, found once per process (docs/code-rl.md#the-sandbox):
// util-linux's prlimit (rlimits), unshare (network, pid and mount namespaces; a user namespace
// when not root) and setpriv (a uid of its own, so the process-count limit counts only the
// sandboxed program). Anything missing is reported in every result instead of being pretended.
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SandboxTools {
  prlimit: string | null;
  unshare: string | null;
  setpriv: string | null;
  sh: string | null;
}

export interface SandboxCapabilities {
  tools: SandboxTools;
  root: boolean;
  /** New network, pid and mount namespaces work (with a user namespace when not root). */
  namespaces: boolean;
  /** Why namespaces could not be used, when they could not. */
  namespaceError: string | null;
}

const SEARCH_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/** The first executable `name` in the usual system folders, then PATH. */
export function findExecutable(name: string): string | null {
  const dirs = [...SEARCH_DIRS, ...(process.env["PATH"] ?? "").split(":").filter((d) => d !== "")];
  for (const dir of dirs) {
    const full = join(dir, name);
    try {
      accessSync(full, constants.X_OK);
      return full;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Runs inside the namespaces before the program: the working directory becomes a mount of its own,
 * then every other mount is remounted read-only, so the program can write nowhere else even as a
 * user that owns files outside. A second argument names a folder to hide under an empty tmpfs (the
 * caller's home when the program runs as the caller's user). Lines starting with the marker are the sandbox's, not the program's.
 */
export const NAMESPACE_SCRIPT = [
  'w="$1"; hide="$2"; shift 2',
  'mount --bind "$w" "$w" || { echo "cookbook-sandbox: cannot bind $w" >&2; exit 125; }',
  'if [ -n "$hide" ]; then mount -t tmpfs -o size=64k,mode=755 tmpfs "$hide" || echo "cookbook-sandbox: could not hide $hide" >&2; fi',
  "for mp in $(awk '{print $5}' /proc/self/mountinfo | sort -u); do",
  '  [ "$mp" = "$w" ] && continue',
  '  case "$mp" in *\\\\*) echo "cookbook-sandbox: left writable: $mp" >&2; continue;; esac',
  '  mount -o remount,bind,ro "$mp" 2>/dev/null || echo "cookbook-sandbox: left writable: $mp" >&2',
  "done",
  'cd "$w" || exit 125',
  '"$@"',
  "exit $?",
].join("\n");

export const SANDBOX_MARKER = "cookbook-sandbox: ";

/** The unshare arguments: network, pid (with its own /proc) and mount namespaces; a user namespace when not root. */
export function namespaceArgs(root: boolean): string[] {
  return [...(root ? [] : ["--user", "--map-root-user"]), "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--mount"];
}

function probeNamespaces(tools: SandboxTools, root: boolean): string | null {
  if (process.platform !== "linux") return `namespaces are Linux only (this is ${process.platform})`;
  if (tools.unshare === null) return "unshare (util-linux) not found";
  if (tools.sh === null) return "/bin/sh not found";
  const dir = mkdtempSync(join(tmpdir(), "cookbook-sandbox-probe-"));
  try {
    const r = spawnSync(tools.unshare, [...namespaceArgs(root), "--", tools.sh, "-c", NAMESPACE_SCRIPT, "sh", dir, "", tools.sh, "-c", "cat /proc/net/dev"], {
      encoding: "utf8",
      timeout: 10_000,
      env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
    });
    if (r.error !== undefined) return `unshare failed to start: ${r.error.message}`;
    if (r.status !== 0) return `unshare ${namespaceArgs(root).join(" ")} failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? "").trim().slice(0, 300)}`;
    // Only the header lines and loopback: no interface of the host is visible.
    const interfaces = (r.stdout ?? "")
      .split("\n")
      .slice(2)
      .filter((l) => l.trim() !== "")
      .map((l) => l.trim().split(":")[0]);
    if (interfaces.some((i) => i !== "lo")) return `the new network namespace still shows ${interfaces.join(", ")}`;
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let cached: SandboxCapabilities | null = null;

export function sandboxCapabilities(): SandboxCapabilities {
  if (cached !== null) return cached;
  const tools: SandboxTools = {
    prlimit: process.platform === "linux" ? findExecutable("prlimit") : null,
    unshare: process.platform === "linux" ? findExecutable("unshare") : null,
    setpriv: process.platform === "linux" ? findExecutable("setpriv") : null,
    sh: findExecutable("sh"),
  };
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  const namespaceError = probeNamespaces(tools, root);
  cached = { tools, root, namespaces: namespaceError === null, namespaceError };
  return cached;
}

/** How many tasks (threads included: RLIMIT_NPROC counts them all) the real uid `uid` runs now. */
export function tasksOfUser(uid: number): number {
  let n = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      const m = /^Uid:\s+(\d+)/m.exec(status);
      if (m !== null && Number(m[1]) === uid) n += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
    } catch {
      // the process ended while we looked
    }
  }
  return n;
}
