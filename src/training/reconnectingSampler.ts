// A sampler that outlives its server. Teachers, judges and baselines are sampling clients the loop
// only reads from, so unlike the policy they need no checkpoint to come back from: when a request
// fails because the server went away (killed, restarted, or unreachable past the HTTP client's own
// retries), this waits for the server, opens a new connection and the same sampler on it, and sends
// the request again. Sampling and logprob requests change nothing on the server, so repeating one
// is safe. On the embedded engine nothing can go away, and samplers are shared as they are.
import { type CreateServiceClientOptions, chooseEngine, createServiceClient } from "../service.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../tinker/types.ts";
import type { SampleOptions, SamplingClient, ServiceClient } from "../tinker/clients.ts";
import { awaitServerReturn, MAX_RESUMES_WITHOUT_PROGRESS, mayMeanServerLoss, type ServerWaitOptions } from "./serverLoss.ts";

/** What to sample from: a base model, or a `tinker://…/sampler_weights/…` checkpoint of one. */
export interface SamplerTarget {
  baseModel: string;
  modelPath?: string;
}

export interface ReconnectOptions extends ServerWaitOptions {
  /** Who the sampler is, for the log: "teacher", "judge" … */
  role: string;
  log: { warn(message: string): void };
  /** Opens a connection (default: createServiceClient for the base URL). */
  connect?: () => Promise<ServiceClient>;
}

interface Connection {
  service: ServiceClient;
  client: SamplingClient;
}

async function openOn(service: ServiceClient, target: SamplerTarget): Promise<SamplingClient> {
  return target.modelPath !== undefined
    ? service.createSamplingClient({ modelPath: target.modelPath, baseModel: target.baseModel })
    : service.createSamplingClient({ baseModel: target.baseModel });
}

export class ReconnectingSamplingClient implements SamplingClient {
  readonly baseModel: string;
  readonly modelPath?: string;
  private connection: Promise<Connection>;
  /** Bumped on every new connection, so the requests that failed together reconnect once. */
  private generation = 0;
  private reconnecting: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly target: SamplerTarget,
    first: Connection,
    private readonly options: ReconnectOptions & { connect: () => Promise<ServiceClient> },
  ) {
    this.baseModel = target.baseModel;
    if (target.modelPath !== undefined) this.modelPath = target.modelPath;
    this.connection = Promise.resolve(first);
  }

  /** Connects once now, so a server that cannot serve the target refuses before any training. */
  static async open(target: SamplerTarget, options: ReconnectOptions & { baseUrl?: string }): Promise<ReconnectingSamplingClient> {
    const connect = options.connect ?? (() => createServiceClient(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}));
    const service = await connect();
    try {
      return new ReconnectingSamplingClient(target, { service, client: await openOn(service, target) }, { ...options, connect });
    } catch (err) {
      await service.close();
      throw err;
    }
  }

  sample(prompt: ModelInput, numSamples: number, params: SamplingParams, options?: SampleOptions): Promise<SampleResponse> {
    return this.call((c) => c.sample(prompt, numSamples, params, options));
  }

  computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    return this.call((c) => c.computeLogprobs(prompt));
  }

  async close(): Promise<void> {
    this.closed = true;
    await (await this.connection.catch(() => null))?.service.close();
  }

  private async call<T>(request: (client: SamplingClient) => Promise<T>): Promise<T> {
    for (let reconnects = 0; ; reconnects++) {
      const generation = this.generation;
      const { client } = await this.connection;
      try {
        return await request(client);
      } catch (err) {
        // A server that answers but fails this one request again and again is not coming back.
        if (this.closed || !mayMeanServerLoss(err) || reconnects >= MAX_RESUMES_WITHOUT_PROGRESS) throw err;
        await this.reconnect(generation, err);
      }
    }
  }

  /** One reconnection for all requests of `generation` that failed; throws when the failure stands. */
  private reconnect(generation: number, err: unknown): Promise<void> {
    if (generation !== this.generation) return Promise.resolve();
    this.reconnecting ??= (async () => {
      try {
        const { service } = await this.connection;
        const what = this.target.modelPath ?? this.target.baseModel;
        const server = `the ${this.options.role}'s server${service.baseUrl !== undefined ? ` at ${service.baseUrl}` : ""}`;
        const back = await awaitServerReturn(err, service, { ...this.options, server });
        if (back === null) throw err;
        await service.close();
        const fresh = await this.options.connect();
        let client: SamplingClient;
        try {
          client = await openOn(fresh, this.target);
        } catch (openErr) {
          await fresh.close();
          throw openErr;
        }
        this.connection = Promise.resolve({ service: fresh, client });
        this.generation++;
        this.options.log.warn(`${server} is back; the ${this.options.role} (${what}) reconnected`);
      } finally {
        this.reconnecting = null;
      }
    })();
    return this.reconnecting;
  }
}

/** The run's samplers beside the policy: on the shared embedded engine, or on a server with reconnects. */
export interface SamplerSource {
  /** The engine every embedded sampler shares (null when the run is remote). */
  shared: ServiceClient | null;
  /** The run's base_url as configured (null: TINKER_BASE_URL, else embedded unless an API key is set). */
  baseUrl: string | null;
  /** How long a sampler waits for a server that went away (the run's server_wait_seconds). */
  waitMs: number;
  log: { warn(message: string): void };
}

/**
 * A sampling client that survives its server: on a remote server its own reconnecting connection;
 * on the embedded engine the run's shared one (or a new engine when there is none to share). The
 * returned close releases what was opened for this sampler alone.
 */
export async function openSampler(source: SamplerSource, target: SamplerTarget, role: string): Promise<{ client: SamplingClient; close: () => Promise<void> }> {
  const options: CreateServiceClientOptions = source.baseUrl !== null ? { baseUrl: source.baseUrl } : {};
  if (chooseEngine(options).kind === "remote") {
    const client = await ReconnectingSamplingClient.open(target, { role, log: source.log, waitMs: source.waitMs, connect: () => createServiceClient(options) });
    return { client, close: () => client.close() };
  }
  if (source.shared !== null && source.shared.engineKind === "embedded") return { client: await openOn(source.shared, target), close: async () => undefined };
  const own = await createServiceClient(options);
  try {
    return { client: await openOn(own, target), close: () => own.close() };
  } catch (err) {
    await own.close();
    throw err;
  }
}
