// A frozen model as an opponent or answerer: a sampling client of fixed weights (a base model, or
// saved sampler weights such as the policy's starting point), created on first use from the run's
// service client — or, outside a run (`cookbook play`), from one of its own.
import { TinkerMessageCompleter, type MessageCompleter } from "../completers.ts";
import type { RLRenderer } from "../renderers/policyRenderer.ts";
import { createServiceClient } from "../service.ts";
import type { ServiceClient } from "../tinker/clients.ts";

export interface FrozenModelSpec {
  baseModel: string;
  /** tinker:// sampler weights to load instead of the base model's own. */
  modelPath: string | null;
}

export type ServiceProvider = () => Promise<ServiceClient>;

/** createServiceClient once, on first call (for callers that are not inside a training run). */
export function lazyService(baseUrl: string | null): ServiceProvider {
  let service: Promise<ServiceClient> | null = null;
  return () => (service ??= createServiceClient(baseUrl !== null ? { baseUrl } : {}));
}

export function frozenModelCompleter(
  service: ServiceProvider,
  spec: FrozenModelSpec,
  renderer: RLRenderer,
  /** `seed`: the completer samples seeded, and opponents fork their own streams from it. */
  options: { maxTokens: number; temperature: number; seed?: number },
): () => Promise<MessageCompleter> {
  let completer: Promise<MessageCompleter> | null = null;
  const make = async (): Promise<MessageCompleter> => {
    const client = await (await service()).createSamplingClient(
      spec.modelPath !== null ? { baseModel: spec.baseModel, modelPath: spec.modelPath } : { baseModel: spec.baseModel },
    );
    return new TinkerMessageCompleter(client, renderer, options.maxTokens, {
      temperature: options.temperature,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
    });
  };
  return () => (completer ??= make());
}
