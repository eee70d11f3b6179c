// Picks the engine behind the Tinker API: the embedded CPU engine by default, the HTTP client when
// a server URL or an API key says so. Recipes and the cookbook only ever call this factory.
import type { ServiceClient } from "./tinker/clients.ts";
import { ConfigurationError } from "./tinker/errors.ts";
import { HttpServiceClient } from "./tinker/http/serviceClient.ts";
import type { HttpClientOptions } from "./tinker/http/options.ts";

export interface CreateServiceClientOptions extends HttpClientOptions {
  /** "local" (embedded engine), an http(s) URL, or unset (TINKER_BASE_URL, then embedded unless an API key is set). */
  baseUrl?: string;
  apiKey?: string;
  /** Options handed to the embedded engine's createEmbeddedServiceClient as they are. */
  engine?: Record<string, unknown>;
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

interface EmbeddedEngineModule {
  createEmbeddedServiceClient(options: Record<string, unknown>): ServiceClient | Promise<ServiceClient>;
}

export async function createServiceClient(options: CreateServiceClientOptions = {}): Promise<ServiceClient> {
  const choice = chooseEngine(options);
  if (choice.kind === "remote") return new HttpServiceClient({ ...options, baseUrl: choice.baseUrl });
  let mod: Partial<EmbeddedEngineModule>;
  try {
    // A computed specifier: the engine is built in parallel and may not exist when this compiles.
    const specifier = new URL("./engine/index.ts", import.meta.url).href;
    mod = (await import(specifier)) as Partial<EmbeddedEngineModule>;
  } catch (err) {
    throw new ConfigurationError(
      `the embedded engine (src/engine/index.ts) could not be loaded: ${(err as Error).message}; set base_url to an http(s) URL to use a remote Tinker server`,
      { cause: err },
    );
  }
  if (typeof mod.createEmbeddedServiceClient !== "function") {
    throw new ConfigurationError("the embedded engine (src/engine/index.ts) does not export createEmbeddedServiceClient");
  }
  return mod.createEmbeddedServiceClient(options.engine ?? {});
}
