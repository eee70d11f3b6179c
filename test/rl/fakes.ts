// Small in-memory stand-ins for the Tinker clients and for envs, so RL logic is tested without
// an engine. The training client records every call (and every result await) in order.
import type { CustomLossFn, RestClient, SampleOptions, SamplingClient, ServiceClient, TinkerFuture, TrainingClient } from "../../src/tinker/clients.ts";
import type {
  AdamParams,
  CheckpointsList,
  Datum,
  ForwardBackwardOutput,
  GetInfoResponse,
  LoadWeightsResponse,
  LossFnName,
  ModelInput,
  OptimStepResponse,
  SampleResponse,
  SamplingParams,
  SaveWeightsResponse,
  ServerCapabilities,
  TrainingRun,
  TrainingRunsList,
  WeightsInfo,
} from "../../src/tinker/types.ts";
import type { StopCondition } from "../../src/completers.ts";
import { EnvGroupBuilder, type Action, type Env, type InitialObservation, type RLDataset, type StepResult } from "../../src/rl/types.ts";

export function tokensOf(mi: ModelInput): number[] {
  return mi.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));
}

export function ints(tokens: number[]): ModelInput {
  return { chunks: [{ type: "encoded_text", tokens }] };
}

function future<T>(events: string[], label: string, value: T | (() => T)): TinkerFuture<T> {
  return {
    async result() {
      events.push(`await:${label}`);
      return typeof value === "function" ? (value as () => T)() : value;
    },
  };
}

/** Samples `policy(prompt, callIndex)` with a fixed logprob per token. */
export class FakeSamplingClient implements SamplingClient {
  readonly baseModel = "fake-model";
  calls = 0;
  readonly prompts: number[][] = [];
  readonly params: SamplingParams[] = [];

  constructor(
    readonly policy: (prompt: number[], call: number) => { tokens: number[]; stop_reason?: "stop" | "length" },
    readonly logprob = -0.5,
    readonly promptLogprob: (token: number, position: number) => number = () => -1,
    readonly modelPath?: string,
  ) {}

  async sample(prompt: ModelInput, numSamples: number, params: SamplingParams, _options?: SampleOptions): Promise<SampleResponse> {
    const toks = tokensOf(prompt);
    this.prompts.push(toks);
    this.params.push(params);
    const sequences = [];
    for (let i = 0; i < numSamples; i++) {
      const out = this.policy(toks, this.calls++);
      sequences.push({ tokens: out.tokens, logprobs: out.tokens.map(() => this.logprob), stop_reason: out.stop_reason ?? ("stop" as const) });
    }
    return { sequences };
  }

  async computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    return tokensOf(prompt).map((t, i) => (i === 0 ? null : this.promptLogprob(t, i)));
  }
}

/** Records calls in order; forward_backward returns logprobs = sampled logprob + `shift`. */
export class FakeTrainingClient implements TrainingClient {
  readonly modelId = "fake-run";
  readonly baseModel = "fake-model";
  readonly events: string[] = [];
  readonly forwardBackwardBatches: Datum[][] = [];
  readonly optimSteps: AdamParams[] = [];
  private fbCount = 0;
  private optCount = 0;
  saves = 0;

  constructor(
    readonly makeSampler: () => SamplingClient,
    readonly trainerShift = -0.1,
  ) {}

  async forward(data: Datum[], lossFn: LossFnName): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return this.forwardBackward(data, lossFn);
  }

  async forwardBackward(data: Datum[], lossFn: LossFnName, _config?: Record<string, number>): Promise<TinkerFuture<ForwardBackwardOutput>> {
    const k = this.fbCount++;
    this.events.push(`fb:${k}`);
    this.forwardBackwardBatches.push(data);
    const outputs = data.map((d) => ({
      logprobs: { data: (d.loss_fn_inputs.logprobs?.data ?? []).map((x) => x + this.trainerShift), dtype: "float32" as const },
    }));
    return future(this.events, `fb:${k}`, { loss_fn_output_type: lossFn, loss_fn_outputs: outputs, metrics: { "loss:sum": 1 } });
  }

  async forwardBackwardCustom(data: Datum[], _lossFn: CustomLossFn): Promise<TinkerFuture<ForwardBackwardOutput>> {
    return this.forwardBackward(data, "cross_entropy");
  }

  async optimStep(adamParams: AdamParams): Promise<TinkerFuture<OptimStepResponse>> {
    const k = this.optCount++;
    this.events.push(`opt:${k}`);
    this.optimSteps.push(adamParams);
    return future(this.events, `opt:${k}`, { metrics: { "optim/grad_norm": 0.5 } });
  }

  async saveState(name: string): Promise<TinkerFuture<SaveWeightsResponse>> {
    this.saves++;
    this.events.push(`save_state:${name}`);
    return future(this.events, `save_state:${name}`, { path: `tinker://fake-run/weights/${name}` });
  }

  async loadState(path: string): Promise<TinkerFuture<LoadWeightsResponse>> {
    return future(this.events, "load", { path });
  }

  async loadStateWithOptimizer(path: string): Promise<TinkerFuture<LoadWeightsResponse>> {
    return future(this.events, "load", { path });
  }

  async saveWeightsForSampler(name: string): Promise<TinkerFuture<SaveWeightsResponse>> {
    this.events.push(`save_sampler:${name}`);
    return future(this.events, `save_sampler:${name}`, { path: `tinker://fake-run/sampler_weights/${name}` });
  }

  async saveWeightsAndGetSamplingClient(): Promise<SamplingClient> {
    this.events.push("snapshot");
    return this.makeSampler();
  }

  async createSamplingClient(_modelPath: string): Promise<SamplingClient> {
    this.events.push("sampler_from_path");
    return this.makeSampler();
  }

  async getInfo(): Promise<GetInfoResponse> {
    return { model_id: this.modelId, model_data: {} };
  }
}

const notUsed = (what: string) => () => Promise.reject(new Error(`${what} is not used by these tests`));

export class FakeServiceClient implements ServiceClient {
  readonly engineKind = "embedded" as const;
  readonly created: string[] = [];
  readonly deleted: string[] = [];

  constructor(
    readonly trainingClient: FakeTrainingClient,
    readonly referenceSampler?: SamplingClient,
  ) {}

  getServerCapabilities(): Promise<ServerCapabilities> {
    return Promise.resolve({ supported_models: [{ model_name: "fake-model" }] });
  }
  async createLoraTrainingClient(baseModel: string): Promise<TrainingClient> {
    this.created.push(`lora:${baseModel}`);
    return this.trainingClient;
  }
  async createTrainingClientFromState(path: string): Promise<TrainingClient> {
    this.created.push(`state:${path}`);
    return this.trainingClient;
  }
  async createTrainingClientFromStateWithOptimizer(path: string): Promise<TrainingClient> {
    this.created.push(`state+optim:${path}`);
    return this.trainingClient;
  }
  readonly samplingClientsCreated: { baseModel?: string; modelPath?: string }[] = [];

  async createSamplingClient(options: { baseModel?: string; modelPath?: string } = {}): Promise<SamplingClient> {
    this.samplingClientsCreated.push(options);
    if (this.referenceSampler === undefined) throw new Error("no reference sampler configured");
    return this.referenceSampler;
  }
  createRestClient(): RestClient {
    return {
      listTrainingRuns: notUsed("listTrainingRuns") as () => Promise<TrainingRunsList>,
      getTrainingRun: notUsed("getTrainingRun") as () => Promise<TrainingRun>,
      getTrainingRunByTinkerPath: notUsed("getTrainingRunByTinkerPath") as () => Promise<TrainingRun>,
      listCheckpoints: notUsed("listCheckpoints") as () => Promise<CheckpointsList>,
      deleteCheckpointFromTinkerPath: async (path: string) => {
        this.deleted.push(path);
      },
      getWeightsInfoByTinkerPath: notUsed("getWeightsInfoByTinkerPath") as () => Promise<WeightsInfo>,
    };
  }
  async close(): Promise<void> {}
}

/** One turn: prompt tokens, reward = rewardOf(action). */
export class OneTurnEnv implements Env {
  constructor(
    readonly prompt: number[],
    readonly rewardOf: (action: Action) => number,
    readonly stop: StopCondition = [0],
  ) {}

  async initialObservation(): Promise<InitialObservation> {
    return { observation: ints(this.prompt), stopCondition: this.stop };
  }

  async step(action: Action): Promise<StepResult> {
    const reward = this.rewardOf(action);
    return { reward, episodeDone: true, nextObservation: { chunks: [] }, nextStopCondition: this.stop, metrics: { correct: reward > 0 ? 1 : 0 } };
  }
}

export class FnGroupBuilder extends EnvGroupBuilder {
  cleaned = 0;
  made = 0;

  constructor(
    readonly make: (index: number) => Env,
    readonly size: number,
    readonly tags: string[] = [],
  ) {
    super();
  }

  async makeEnvs(): Promise<Env[]> {
    return Array.from({ length: this.size }, () => this.make(this.made++));
  }

  override async cleanup(): Promise<void> {
    this.cleaned += 1;
  }

  override loggingTags(): string[] {
    return this.tags;
  }
}

export class ListDataset implements RLDataset {
  constructor(readonly batches: EnvGroupBuilder[][]) {}
  get length(): number {
    return this.batches.length;
  }
  getBatch(index: number): EnvGroupBuilder[] {
    const b = this.batches[index];
    if (b === undefined) throw new Error(`no batch ${index}`);
    return b;
  }
}
