// The slice of a renderer evaluation needs, stated structurally so any src/renderers Renderer
// fits and tests can pass a small fake.
import type { Message, ParsedResponse, SupervisedExample, TrainOnWhat } from "../renderers/types.ts";
import type { ModelInput } from "../tinker/types.ts";

export interface EvalRenderer {
  buildGenerationPrompt(messages: readonly Message[]): ModelInput;
  getStopSequences(): number[] | string[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
  /** Only NLL benchmarks call this. */
  buildSupervisedExamples?(messages: readonly Message[], trainOnWhat?: TrainOnWhat): SupervisedExample[];
}
