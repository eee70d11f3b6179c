// The Python 3.11 virtual environment end-to-end tests use as a reference (torch, transformers,
// peft, safetensors from pip's configured index). Made on first use; a missing Python or a pip
// that cannot install fails the test loudly with pip's own output.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export const PYTHON_PACKAGES = ["torch", "transformers", "peft", "safetensors", "numpy", "tensorboard"];

export function e2eVenvDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.COOKBOOK_E2E_VENV || join(homedir(), ".cache", "tinker-cookbook-ts", "e2e-venv");
}

/** The venv's python, with `modules` importable; creates or completes the venv when needed. */
export function ensurePythonVenv(modules: string[] = ["torch", "transformers", "peft", "safetensors"]): string {
  const dir = e2eVenvDir();
  const python = join(dir, "bin", "python");
  const check = (): boolean => existsSync(python) && spawnSync(python, ["-c", `import ${modules.join(", ")}`], { stdio: "ignore" }).status === 0;
  if (check()) return python;
  if (!existsSync(python)) {
    mkdirSync(dirname(dir), { recursive: true });
    const made = spawnSync("python3.11", ["-m", "venv", dir], { encoding: "utf8" });
    if (made.error !== undefined || made.status !== 0) {
      throw new Error(
        `cannot create the Python 3.11 venv at ${dir} (python3.11 -m venv): ${made.error?.message ?? made.stderr}; install python3.11 and python3.11-venv`,
      );
    }
  }
  // --retries 0: an unreachable default index fails at once and pip moves on to the configured local ones.
  const pip = spawnSync(python, ["-m", "pip", "install", "--quiet", "--retries", "0", ...PYTHON_PACKAGES], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (pip.status !== 0 || !check()) {
    throw new Error(
      `pip could not install ${PYTHON_PACKAGES.join(" ")} into ${dir}:\n${(pip.stderr || "")
        .split("\n")
        .filter((l) => !l.includes("is ignored"))
        .slice(-20)
        .join("\n")}`,
    );
  }
  return python;
}

/** Runs a Python script with a JSON request on stdin and parses the JSON it prints last. */
export function runPythonJson<T>(python: string, script: string, request: unknown): T {
  const out = execFileSync(python, [script], {
    input: JSON.stringify(request),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1", TOKENIZERS_PARALLELISM: "false" },
  });
  const last = out.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${script} did not print JSON last; its output:\n${out}`);
  }
}
