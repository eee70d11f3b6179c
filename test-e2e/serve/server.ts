// `cookbook serve` in its own process for the e2e tests: started on a free port (or a given one, to
// restart it at the same URL) with its own store and an environment with no TINKER_* keys, its URL
// read from stdout, and stopped with SIGTERM or killed outright.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { join } from "node:path";
import { execa } from "execa";

const CLI = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");

export interface ServeProcess {
  url: string;
  /** What the server wrote to stderr so far (for failure messages). */
  stderr: () => string;
  /** SIGTERM, and asserts a clean exit. */
  stop: () => Promise<void>;
  /**
   * SIGKILL to the server's whole process group, as a crash or an OOM kill would end it (cookbook
   * serve re-runs itself once with allocator settings, so killing the first process alone would
   * leave the real server running). Resolves once it is gone.
   */
  kill: () => Promise<void>;
}

/** A port that was free a moment ago (for a server that must come back at the same URL). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `env` must not carry TINKER_BASE_URL / TINKER_API_KEY: it replaces the process environment. */
export async function startServe(store: string, env: NodeJS.ProcessEnv, options: { port?: number } = {}): Promise<ServeProcess> {
  const child = execa(process.execPath, [CLI, "serve", "--port", String(options.port ?? 0), "--store", store], {
    env,
    extendEnv: false,
    stdin: "ignore",
    buffer: false,
    reject: false,
    // Its own process group, so kill() reaches the re-run child too.
    detached: true,
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`cookbook serve printed no URL within 60 s; stderr: ${stderr}`)), 60_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`cookbook serve exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      assert.equal(await exited, 0, `cookbook serve did not shut down cleanly: ${stderr}`);
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    },
  };
}

/** The process environment without the keys that would point a client elsewhere. */
export function serveEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.TINKER_BASE_URL;
  delete env.TINKER_API_KEY;
  return env;
}
