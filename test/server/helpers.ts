// Shared helpers of the server tests: a tiny model on disk, `cookbook serve` started in-process on
// an ephemeral port, an embedded engine over the same model for comparisons, and raw requests.
import { join } from "node:path";
import { createEmbeddedServiceClient, type EmbeddedServiceClient } from "../../src/engine/index.ts";
import { startServer, type RunningServer, type ServeOptions } from "../../src/server/index.ts";
import { HttpServiceClient } from "../../src/tinker/http/serviceClient.ts";
import type { HttpClientOptions } from "../../src/tinker/http/options.ts";
import { tempDir, writeTinyModel } from "../engine/helpers.ts";

export { ceDatum, randomTokens } from "../engine/helpers.ts";

export interface Env {
  root: string;
  modelDir: string;
  resolve: { env: Record<string, string>; fixturesDir: string };
  cleanup(): void;
}

export function makeEnv(): Env {
  const t = tempDir("server-test-");
  const modelDir = join(t.dir, "tiny");
  writeTinyModel(modelDir, { seed: 7 });
  return {
    root: t.dir,
    modelDir,
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(t.dir, "hf"), COOKBOOK_HOME: t.dir }, fixturesDir: join(t.dir, "fixtures") },
    cleanup: t.cleanup,
  };
}

export interface Served {
  server: RunningServer;
  lines: string[];
}

export async function serve(env: Env, options: ServeOptions = {}, storeName = "served-store"): Promise<Served> {
  const lines: string[] = [];
  const server = await startServer(
    { port: 0, storeDir: join(env.root, storeName), kernels: "reference", ...options },
    { resolve: env.resolve, log: (l) => lines.push(l) },
  );
  return { server, lines };
}

export function embedded(env: Env, storeName = "embedded-store"): EmbeddedServiceClient {
  return createEmbeddedServiceClient({ storeDir: join(env.root, storeName), kernels: "reference", resolve: env.resolve });
}

export function client(url: string, options: HttpClientOptions = {}): HttpServiceClient {
  return new HttpServiceClient({
    baseUrl: url,
    env: {},
    retryBudgetMs: 2_000,
    logger: { info: () => undefined, warn: () => undefined },
    ...options,
  });
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  json: Record<string, unknown>;
}

/** One request without any client logic; JSON bodies unless `body` bytes are given. */
export async function raw(
  url: string,
  path: string,
  options: { method?: string; json?: unknown; body?: Uint8Array | string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: Uint8Array | string | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(url + path, { method: options.method ?? (body === undefined ? "GET" : "POST"), headers, body });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let json: Record<string, unknown> = {};
  if ((res.headers.get("content-type") ?? "").includes("json") && bytes.length > 0) {
    json = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

/** Creates a session and a LoRA model with raw requests; returns their ids. */
export async function rawModel(url: string, modelDir: string, headers: Record<string, string> = {}): Promise<{ sessionId: string; modelId: string }> {
  const s = await raw(url, "/api/v1/create_session", { json: { tags: [], user_metadata: {}, sdk_version: "test" }, headers });
  const sessionId = s.json["session_id"] as string;
  const c = await raw(url, "/api/v1/create_model", {
    json: { session_id: sessionId, model_seq_id: 0, base_model: modelDir, lora_config: { rank: 4, seed: 1 } },
    headers,
  });
  const result = await waitFuture(url, c.json["request_id"] as string, headers);
  return { sessionId, modelId: result.json["model_id"] as string };
}

/** Polls retrieve_future until it is not 408. */
export async function waitFuture(url: string, requestId: string, headers: Record<string, string> = {}, accept = "application/json"): Promise<RawAnswer> {
  for (;;) {
    const r = await raw(url, "/api/v1/retrieve_future", { json: { request_id: requestId }, headers: { ...headers, accept } });
    if (r.status !== 408) return r;
  }
}
