// In-memory stand-ins for the Tinker clients, so the supervised loop is tested without an engine.
// The fake model's "weights" are the list of example ids it was trained on (a step commits the
// ids of its forward_backward when its optim_step runs), so a test can see exactly which batches
// were trained, how often, and what a checkpoint holds. Every call and result await is recorded.
import type { RunControl } from "../../src/runs/control.ts";
import { seededShuffle } from "../../src/data/shuffle.ts";
import type { SupervisedDataset } from "../../src/supervised/types.ts";
import type { RestClient, SamplingClient, ServiceClient, TinkerFuture, TrainingClient } from "../../src/tinker/clients.ts";
import type { AdamParams, Datum, ForwardBackwardOutput, ModelInput, OptimStepResponse, SaveWeightsResponse } from "../../src/tinker/types.ts";

/** A datum whose tokens are [id, id, id] and whose one trained target is id. */
export function idDatum(id: number, length = 3): Datum {
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: Array.from({ length }, () => id) }] },
    loss_fn_inputs: {
      target_tokens: { data: Array.from({ length }, () => id), dtype: "int64", shape: [length] },
      weights: { data: Array.from({ length }, (_, i) => (i === length - 1 ? 1 : 0)), dtype: "float32", shape: [length] },
    },
  };
}

export function idOf(datum: Datum): number {
  const c = datum.model_input.chunks[0]!;
  if (c.type !== "encoded_text") throw new Error("idOf: not a text chunk");
  return c.tokens[0]!;
}

/** `rows` examples with ids 0..rows-1, reshuffled per epoch like the real datasets. */
export class IdDataset implements SupervisedDataset {
  private order: number[];
  epochs: number[] = [];
  constructor(
    readonly rows: number,
    readonly batchSize: number,
  ) {
    this.order = Array.from({ length: rows }, (_, i) => i);
  }
  get length(): number {
    return Math.floor(this.rows / this.batchSize);
  }
  getBatch(index: number): Datum[] {
    return this.order.slice(index * this.batchSize, (index + 1) * this.batchSize).map((id) => idDatum(id));
  }
  setEpoch(seed: number): void {
    this.epochs.push(seed);
    this.order = seededShuffle(
      Array.from({ length: this.rows }, (_, i) => i),
      seed,
    );
  }
}

interface Snapshot {
  trained: number[];
  steps: number;
}

export class FakeStore {
  readonly states = new Map<string, Snapshot>();
}

function fut<T>(events: string[], label: string, compute: () => T): TinkerFuture<T> {
  let value: { v: T } | null = null;
  return {
    async result() {
      events.push(`await:${label}`);
      value ??= { v: compute() };
      return value.v;
    },
  };
}

export class FakeTrainingClient implements TrainingClient {
  readonly baseModel = "fake-model";
  readonly events: string[] = [];
  readonly adam: AdamParams[] = [];
  trained: number[] = [];
  steps = 0;
  private pendingIds: number[] = [];
  private fbCalls = 0;
  samplers = 0;
  /** Called with the 0-based index of each forwardBackward as it is queued (may throw to simulate a crash). */
  onForwardBackward: (index: number) => void = () => {};

  constructor(
    readonly modelId: string,
    readonly store: FakeStore,
    from?: Snapshot,
  ) {
    if (from) {
      this.trained = [...from.trained];
      this.steps = from.steps;
    }
  }

  /** Logprob every token gets: rises toward 0 as the model trains. */
  logprob(): number {
    return -2 / (1 + this.steps);
  }

  /** Scales a datum's logprobs by its id (a test that needs datums to differ sets it). */
  logprobScale: (id: number) => number = () => 1;

  private output(data: Datum[]): ForwardBackwardOutput {
    return {
      loss_fn_output_type: "cross_entropy",
      loss_fn_outputs: data.map((d) => {
        const lp = this.logprob() * this.logprobScale(idOf(d));
        const n = d.loss_fn_inputs["target_tokens"]!.data.length;
        return { logprobs: { data: Array.from({ length: n }, () => lp), dtype: "float32" as const, shape: [n] } };
      }),
      metrics: { "loss:sum": 0 },
    };
  }

  async forward(data: Datum[]): Promise<TinkerFuture<ForwardBackwardOutput>> {
    const label = `fwd:${data.map(idOf).join(",")}`;
    this.events.push(`submit:${label}`);
    const out = this.output(data);
    return fut(this.events, label, () => out);
  }

  async forwardBackward(data: Datum[]): Promise<TinkerFuture<ForwardBackwardOutput>> {
    this.onForwardBackward(this.fbCalls++);
    const label = `fb:${data.map(idOf).join(",")}`;
    this.events.push(`submit:${label}`);
    // Requests run in submission order: the output is computed now, before later steps apply.
    const out = this.output(data);
    this.pendingIds.push(...data.map(idOf));
    return fut(this.events, label, () => out);
  }

  forwardBackwardCustom(): Promise<TinkerFuture<ForwardBackwardOutput>> {
    throw new Error("not used");
  }

  async optimStep(adamParams: AdamParams): Promise<TinkerFuture<OptimStepResponse>> {
    this.events.push(`submit:optim:${this.steps}`);
    this.adam.push(adamParams);
    this.trained.push(...this.pendingIds);
    this.pendingIds = [];
    this.steps += 1;
    const label = `optim:${this.steps - 1}`;
    return fut(this.events, label, () => ({ metrics: { "optimizer_step:max": this.steps } }));
  }

  private save(kind: string, name: string): TinkerFuture<SaveWeightsResponse> {
    const path = `tinker://${this.modelId}/${kind}/${name}`;
    this.events.push(`submit:save:${kind}:${name}`);
    this.store.states.set(path, { trained: [...this.trained], steps: this.steps });
    return fut(this.events, `save:${kind}:${name}`, () => ({ path }));
  }

  async saveState(name: string): Promise<TinkerFuture<SaveWeightsResponse>> {
    return this.save("weights", name);
  }

  async saveWeightsForSampler(name: string): Promise<TinkerFuture<SaveWeightsResponse>> {
    return this.save("sampler_weights", name);
  }

  async loadState(): Promise<never> {
    throw new Error("not used");
  }
  async loadStateWithOptimizer(): Promise<never> {
    throw new Error("not used");
  }

  async saveWeightsAndGetSamplingClient(): Promise<SamplingClient> {
    this.samplers += 1;
    this.events.push(`sampler:${this.steps}`);
    const steps = this.steps;
    return {
      baseModel: this.baseModel,
      modelPath: `snapshot-after-${steps}`,
      async sample() {
        return { sequences: [] };
      },
      async computeLogprobs(prompt: ModelInput) {
        return prompt.chunks.map(() => null);
      },
    };
  }

  async createSamplingClient(): Promise<SamplingClient> {
    throw new Error("not used");
  }

  async getInfo(): Promise<never> {
    throw new Error("not used");
  }
}

export class FakeServiceClient implements ServiceClient {
  readonly engineKind = "embedded" as const;
  readonly clients: FakeTrainingClient[] = [];
  readonly calls: string[] = [];
  readonly deleted: string[] = [];
  private n = 0;
  constructor(readonly store = new FakeStore()) {}

  get last(): FakeTrainingClient {
    return this.clients[this.clients.length - 1]!;
  }

  async getServerCapabilities(): Promise<never> {
    throw new Error("not used");
  }

  async createLoraTrainingClient(baseModel: string): Promise<FakeTrainingClient> {
    this.calls.push(`lora:${baseModel}`);
    const tc = new FakeTrainingClient(`fake-${this.n++}`, this.store);
    this.clients.push(tc);
    return tc;
  }

  private fromState(path: string, how: string): FakeTrainingClient {
    this.calls.push(`${how}:${path}`);
    const snap = this.store.states.get(path);
    if (!snap) throw new Error(`no state at ${path}`);
    const tc = new FakeTrainingClient(`fake-${this.n++}`, this.store, snap);
    this.clients.push(tc);
    return tc;
  }

  async createTrainingClientFromState(path: string): Promise<FakeTrainingClient> {
    return this.fromState(path, "state");
  }

  async createTrainingClientFromStateWithOptimizer(path: string): Promise<FakeTrainingClient> {
    return this.fromState(path, "state+optimizer");
  }

  async createSamplingClient(): Promise<never> {
    throw new Error("not used");
  }

  createRestClient(): RestClient {
    const deleted = this.deleted;
    const no = async (): Promise<never> => {
      throw new Error("not used");
    };
    return {
      listTrainingRuns: no,
      getTrainingRun: no,
      getTrainingRunByTinkerPath: no,
      listCheckpoints: no,
      getWeightsInfoByTinkerPath: no,
      async deleteCheckpointFromTinkerPath(path: string) {
        deleted.push(path);
      },
    };
  }

  async close(): Promise<void> {}
}

/** A RunControl whose flags the test sets. */
export class FakeControl implements RunControl {
  checkpointRequested = false;
  stopRequested = false;
  consumeCheckpointRequest(): boolean {
    const was = this.checkpointRequested;
    this.checkpointRequested = false;
    return was;
  }
  dispose(): void {}
}
