// Picks the engine behind the Tinker API: the embedded CPU engine by default, the HTTP client when
// a server URL or an API key says so. Recipes and the cookbook only ever call this factory.
import type { ServiceClient } from "./tinker/clients.ts";
import { ConfigurationError } from "./tinker/errors.ts";
import type { HttpClientOptions } from "./tinker/http/options.ts";
import type { EmbeddedServiceClientOptions } from "./engine/client.ts";

export interface CreateServiceClientOptions extends HttpClientOptions {
  /** "local" (embedded engine), an http(s) URL, or unset (TINKER_BASE_URL, then embedded unless an API key is set). */
  baseUrl?: string;
  apiKey?: string;
  /** Options of the embedded engine (checkpoint store folder, kernel choice, test hooks). */
  engine?: EmbeddedServiceClientOptions;
}

export type EngineChoice = { kind: "embedded" } | { kind: "remote"; baseUrl: string | undefined };

/** The engine the options select, without creating it. */
export function chooseEngine(options: CreateServiceClientOptions): EngineChoice {
  const env = options.env ?? process.env;
  const baseUrl = options.baseUrl ?? (env["TINKER_BASE_URL"] || undefined);
  const apiKey = options.apiKey ?? (env["TINKER_API_KEY"] || undefined);
  if (baseUrl === "local") return { kind: "embedded" };
  if (baseUrl !== undefined) {
    if (!/^https?:\/\//i.test(baseUrl)) {
      throw new ConfigurationError(`base_url ${JSON.stringify(baseUrl)} is not supported; expected "local" or an http(s):// URL`);
    }
    return { kind: "remote", baseUrl };
  }
  // An API key alone means the hosted service at its default URL.
  if (apiKey !== undefined) return { kind: "remote", baseUrl: undefined };
  return { kind: "embedded" };
}

export async function createServiceClient(options: CreateServiceClientOptions = {}): Promise<ServiceClient> {
  const choice = chooseEngine(options);
  // Each engine's code loads only when chosen: remote-only commands never start the embedded
  // engine's worker or load its addon, and the UI (which imports this module to name the engine)
  // does not build the HTTP client's protocol schemas before its first frame.
  if (choice.kind === "remote") {
    const { HttpServiceClient } = await import("./tinker/http/serviceClient.ts");
    return new HttpServiceClient({ ...options, baseUrl: choice.baseUrl });
  }
  const engine = await import("./engine/index.ts");
  return engine.createEmbeddedServiceClient(options.engine ?? {});
}
