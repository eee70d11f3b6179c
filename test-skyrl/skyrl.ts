// The live SkyRL tx suite's plumbing. SkyRL tx is not something this project installs or builds
// (docs/remote.md says how a developer starts one); the suite runs against the server that
// SKYRL_TX_URL points at and is skipped, saying so, when it is not set.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { finished, startCookbook, tempDir, type Finished } from "../test-e2e/faults/helpers.ts";

export const SKYRL_URL = process.env["SKYRL_TX_URL"]?.replace(/\/+$/, "") || undefined;

/** The `skip` option of every live test: a reason when no server is configured. */
export const skipWithoutSkyrl: { skip: string | false } = {
  skip: SKYRL_URL === undefined ? "SKYRL_TX_URL is not set (start SkyRL tx as docs/remote.md describes and point SKYRL_TX_URL at it)" : false,
};

export function skyrlUrl(): string {
  if (SKYRL_URL === undefined) throw new Error("SKYRL_TX_URL is not set");
  return SKYRL_URL;
}

/** The base model the server serves, as it names it (SkyRL tx serves one, by the folder or hub id it was started with). */
export async function servedModel(url = skyrlUrl()): Promise<string> {
  const res = await fetch(`${url}/api/v1/get_server_capabilities`);
  if (!res.ok) throw new Error(`${url}/api/v1/get_server_capabilities answered HTTP ${res.status}: is SkyRL tx running there?`);
  const body = (await res.json()) as { supported_models?: { model_name?: string | null }[] };
  const name = body.supported_models?.[0]?.model_name;
  if (typeof name !== "string") throw new Error(`${url} lists no supported model: ${JSON.stringify(body)}`);
  return name;
}

export type Row = Record<string, unknown>;

export function readJsonl(file: string): Row[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row);
}

export const metricsOf = (logDir: string): Row[] => readJsonl(join(logDir, "metrics.jsonl"));
export const checkpointsOf = (logDir: string): Row[] => readJsonl(join(logDir, "checkpoints.jsonl"));

/** `cookbook …` with its own COOKBOOK_HOME; stdin text for `chat`. SkyRL's first steps JIT-compile: minutes, not seconds. */
export async function cookbook(args: string[], env: NodeJS.ProcessEnv, options: { stdin?: string; timeoutMs?: number } = {}): Promise<Finished> {
  const child = startCookbook(args, env, options.stdin !== undefined ? "pipe" : "ignore");
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  return finished(child, options.timeoutMs ?? 900_000);
}

/** Throws with the command's stderr unless it exited 0. */
export function ok(result: Finished, what: string): Finished {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code ?? result.signal}:\n${result.stderr.slice(-4000)}`);
  return result;
}

/**
 * `cookbook run <recipe>` on the served model with a few steps, in a temporary folder; its
 * metrics rows and checkpoint records.
 */
export async function train(recipe: string, args: string[]): Promise<{ rows: Row[]; checkpoints: Row[]; logDir: string }> {
  const root = tempDir(`skyrl-${recipe}-`);
  const env = { COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" };
  const logDir = join(root, recipe);
  const model = await servedModel();
  ok(
    await cookbook(["run", recipe, `base_url=${skyrlUrl()}`, `model_name=${model}`, `log_path=${logDir}`, "behavior_if_log_dir_exists=delete", ...args], env),
    `cookbook run ${recipe}`,
  );
  return { rows: metricsOf(logDir), checkpoints: checkpointsOf(logDir), logDir };
}

export const num = (row: Row | undefined, key: string): number => {
  const v = row?.[key];
  assert.equal(typeof v, "number", `metric ${key} in ${JSON.stringify(row)}`);
  return v as number;
};

export function assertSteps(rows: Row[], n: number): void {
  assert.deepEqual(
    rows.map((r) => r["step"]),
    Array.from({ length: n }, (_, i) => i),
    "one metrics row per step",
  );
}

/** The final record, with SkyRL's state path and its sampler path as given (tinker://<id>/<name>). */
export function assertFinal(checkpoints: Row[]): Row {
  const final = checkpoints.find((c) => c["final"] === true);
  assert.ok(final !== undefined, `no final checkpoint in ${JSON.stringify(checkpoints)}`);
  assert.match(String(final["state_path"]), /^tinker:\/\/[^/]+\/weights\/final$/);
  assert.match(String(final["sampler_path"]), /^tinker:\/\/[^/]+\/(sampler_weights\/)?final$/);
  return final;
}
