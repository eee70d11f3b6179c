// What an OpenAI `model` names on this server: a base model the engine serves, or a tinker://
// checkpoint in its store. Each becomes a sampler (through the server's fair scheduler, so OpenAI
// traffic takes turns with Tinker sessions), the base model's tokenizer, and the renderer the
// checkpoint was trained with (its run's renderer_name metadata), else the model's recommended one.
import { EmbeddedSamplingClient } from "../../engine/index.ts";
import { resolveRendererName } from "../../modelInfo.ts";
import type { Renderer } from "../../renderers/base.ts";
import { getRenderer } from "../../renderers/registry.ts";
import type { SampleOptions, SamplingClient } from "../../tinker/clients.ts";
import { isTinkerPath } from "../../tinker/paths.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../tinker/types.ts";
import { getTokenizer } from "../../tokenizers/index.ts";
import type { Tokenizer } from "../../tokenizers/types.ts";
import type { ServerCore } from "../core.ts";
import { HttpError } from "../http.ts";
import { checkTinkerPath } from "../ids.ts";
import { sampleCost } from "../sampleCost.ts";

export interface Target {
  id: string;
  baseModel: string;
  sampler: SamplingClient;
  tokenizer: Tokenizer;
  renderer: Renderer;
  rendererName: string;
  /** The model's context window, when the engine knows it. */
  contextLength: number | undefined;
}

/** Samplers kept warm for OpenAI requests; the least recently used beyond this is released. */
const MAX_TARGETS = 8;
const SCHEDULER_SESSION = "(openai)";

export class OpenAITargets {
  private readonly targets = new Map<string, Promise<Target>>();

  constructor(private readonly core: ServerCore) {}

  /** The target `model` names; 404 (model_not_found) when the server cannot serve it. */
  async get(model: string): Promise<Target> {
    let t = this.targets.get(model);
    if (t === undefined) {
      t = this.open(model);
      this.targets.set(model, t);
      t.catch(() => this.targets.delete(model));
      this.evict();
    } else {
      // Most recently used last.
      this.targets.delete(model);
      this.targets.set(model, t);
    }
    return t;
  }

  private evict(): void {
    while (this.targets.size > MAX_TARGETS) {
      const [oldest, t] = this.targets.entries().next().value as [string, Promise<Target>];
      this.targets.delete(oldest);
      void t.then((x) => (x.sampler instanceof ScheduledSampler ? x.sampler.release() : undefined)).catch(() => undefined);
    }
  }

  private async open(model: string): Promise<Target> {
    const notFound = (why: string): HttpError =>
      new HttpError(404, {
        error: {
          message: `model ${JSON.stringify(model)} is not served here: ${why}; GET /v1/models lists what is`,
          type: "invalid_request_error",
          param: "model",
          code: "model_not_found",
        },
      });
    let client: SamplingClient;
    let rendererName: string | null = null;
    if (isTinkerPath(model)) {
      try {
        checkTinkerPath(model);
        client = await this.core.service.createSamplingClient({ modelPath: model });
      } catch (err) {
        throw notFound((err as Error).message);
      }
      // The renderer the checkpoint was trained with, so prompts look as they did in training.
      const run = await this.core.rest.getTrainingRunByTinkerPath(model).catch(() => null);
      rendererName = run?.user_metadata?.["renderer_name"] ?? null;
    } else {
      try {
        this.core.features.checkModel(model);
        client = await this.core.service.createSamplingClient({ baseModel: model });
      } catch (err) {
        throw notFound(err instanceof HttpError ? String(err.message) : (err as Error).message);
      }
    }
    const embedded = client;
    client = this.core.hooks.wrapOpenAISampler?.(client, model) ?? client;
    const baseModel = client.baseModel;
    const tokenizer = await getTokenizer(baseModel);
    const name = resolveRendererName(baseModel, rendererName);
    const contextLength = embedded instanceof EmbeddedSamplingClient ? embedded.info.contextLength : undefined;
    return {
      id: model,
      baseModel,
      sampler: new ScheduledSampler(this.core, client, embedded),
      tokenizer,
      renderer: getRenderer(name, tokenizer),
      rendererName: name,
      contextLength,
    };
  }
}

/** A sampler whose requests take their turn at the engine and count against the per-request cap. */
class ScheduledSampler implements SamplingClient {
  constructor(
    private readonly core: ServerCore,
    private readonly inner: SamplingClient,
    /** The engine's own sampler (the one to release), which `inner` may wrap. */
    private readonly engine: SamplingClient,
  ) {}

  get baseModel(): string {
    return this.inner.baseModel;
  }

  get modelPath(): string | undefined {
    return this.inner.modelPath;
  }

  sample(prompt: ModelInput, numSamples: number, params: SamplingParams, options?: SampleOptions): Promise<SampleResponse> {
    const cost = sampleCost(numSamples, prompt, params.max_tokens, this.core.options.maxSampleTokens);
    return this.core.scheduler.run(SCHEDULER_SESSION, cost, () => this.inner.sample(prompt, numSamples, params, options));
  }

  computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    return this.inner.computeLogprobs(prompt);
  }

  async release(): Promise<void> {
    if (this.engine instanceof EmbeddedSamplingClient) await this.engine.release();
  }
}
