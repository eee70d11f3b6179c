// `cookbook serve` in its own process for the e2e tests: started on a free port with its own store
// and an environment with no TINKER_* keys, its URL read from stdout, and stopped with SIGTERM.
import assert from "node:assert/strict";
import { join } from "node:path";
import { execa } from "execa";

const CLI = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");

export interface ServeProcess {
  url: string;
  /** What the server wrote to stderr so far (for failure messages). */
  stderr: () => string;
  /** SIGTERM, and asserts a clean exit. */
  stop: () => Promise<void>;
}

/** `env` must not carry TINKER_BASE_URL / TINKER_API_KEY: it replaces the process environment. */
export async function startServe(store: string, env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const child = execa(process.execPath, [CLI, "serve", "--port", "0", "--store", store], { env, extendEnv: false, stdin: "ignore", buffer: false, reject: false });
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
  };
}

/** The process environment without the keys that would point a client elsewhere. */
export function serveEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.TINKER_BASE_URL;
  delete env.TINKER_API_KEY;
  return env;
}
