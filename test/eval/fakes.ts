// Test doubles for evaluation: a renderer whose tokens are character codes, and a sampler that
// answers "What is x + y?" from the request seed (so results depend on the seed only), counts
// its calls, and can be slowed down.
import type { Message, ParsedResponse, SupervisedExample } from "../../src/renderers/types.ts";
import { getTextContent } from "../../src/renderers/content.ts";
import type { SamplingClient, ServiceClient } from "../../src/tinker/clients.ts";
import { modelInputFromInts, modelInputToInts } from "../../src/tinker/modelInput.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../src/tinker/types.ts";
import type { EvalRenderer } from "../../src/eval/renderer.ts";

const encode = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));
const decode = (t: readonly number[]): string => String.fromCharCode(...t);

export const fakeRenderer: EvalRenderer = {
  buildGenerationPrompt(messages: readonly Message[]): ModelInput {
    return modelInputFromInts(encode(messages.map((m) => `${m.role}: ${getTextContent(m)}\n`).join("") + "assistant:"));
  },
  getStopSequences: () => ["\n"],
  parseResponse(tokens: readonly number[]): ParsedResponse {
    return { message: { role: "assistant", content: decode(tokens) }, termination: "stop_sequence" };
  },
  buildSupervisedExamples(messages: readonly Message[]): SupervisedExample[] {
    const tokens: number[] = [];
    const weights: number[] = [];
    for (const m of messages) {
      const t = encode(`${m.role}: ${getTextContent(m)}\n`);
      tokens.push(...t);
      weights.push(...t.map(() => (m.role === "assistant" ? 1 : 0)));
    }
    return [{ modelInput: modelInputFromInts(tokens), weights: Float32Array.from(weights) }];
  },
};

/** Last "What is x + y?" in the prompt, answered right unless (seed + sample) % wrongEvery === 0. */
export class FakeSampler implements SamplingClient {
  readonly baseModel = "fake-model";
  calls = 0;
  sampledPrompts: string[] = [];

  constructor(readonly options: { delayMs?: number; wrongEvery?: number; failOn?: string } = {}) {}

  async sample(prompt: ModelInput, numSamples: number, params: SamplingParams): Promise<SampleResponse> {
    this.calls += 1;
    const text = decode(modelInputToInts(prompt));
    this.sampledPrompts.push(text);
    if (this.options.delayMs) await new Promise((r) => setTimeout(r, this.options.delayMs));
    if (this.options.failOn !== undefined && text.includes(this.options.failOn)) throw new Error("sampler exploded");
    const matches = [...text.matchAll(/What is (\d+) \+ (\d+)\?/g)];
    const m = matches[matches.length - 1];
    const right = m === undefined ? 0 : Number(m[1]) + Number(m[2]);
    const seed = params.seed ?? 0;
    const wrongEvery = this.options.wrongEvery ?? 3;
    return {
      sequences: Array.from({ length: numSamples }, (_, i) => {
        const answer = (seed + i) % wrongEvery === 0 ? right + 1 : right;
        return { stop_reason: "stop" as const, tokens: encode(` ${answer}`) };
      }),
    };
  }

  /** Every token scores log(0.5) except assistant text, scored log(0.25). */
  async computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    return modelInputToInts(prompt).map((_, i) => (i === 0 ? null : Math.log(0.5)));
  }
}

export function fakeService(sampler: SamplingClient): ServiceClient {
  const unsupported = () => {
    throw new Error("not used by eval tests");
  };
  return {
    engineKind: "embedded",
    getServerCapabilities: async () => ({ supported_models: [{ model_name: "fake-model", max_context_length: 4096 }] }),
    createLoraTrainingClient: unsupported,
    createTrainingClientFromState: unsupported,
    createTrainingClientFromStateWithOptimizer: unsupported,
    createSamplingClient: async () => sampler,
    createRestClient: unsupported,
    close: async () => undefined,
  };
}
