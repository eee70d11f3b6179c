// SamplingClient over HTTP (spec §2.4): per-client seq_id from 0, backpressure-aware submission,
// protobuf or JSON results, and resubmission of expired requests.
import type { SampleOptions, SamplingClient } from "../clients.ts";
import { InvalidArgumentError, TinkerError } from "../errors.ts";
import { SampleResponseSchema, SamplingParamsSchema, type ModelInput, type SampleResponse, type SamplingParams } from "../types.ts";
import { parseResponse, type HttpContext } from "./context.ts";
import { decodeSampleResponse } from "./proto/messages.ts";
import type { Semaphore } from "./semaphore.ts";
import type { HttpRequest } from "./transport.ts";

/** Prompts up to this size wait 1 s after a backpressure 429, bigger ones 5 s. */
const SMALL_PROMPT_BYTES = 128 * 1024;

export class HttpSamplingClient implements SamplingClient {
  private seq = 0;

  constructor(
    private readonly ctx: HttpContext,
    private readonly semaphore: Semaphore,
    readonly samplingSessionId: string,
    readonly baseModel: string,
    readonly modelPath?: string,
  ) {}

  async sample(prompt: ModelInput, numSamples: number, params: SamplingParams, options: SampleOptions = {}): Promise<SampleResponse> {
    if (!Number.isInteger(numSamples) || numSamples < 1) {
      throw new InvalidArgumentError(`sample: numSamples is ${numSamples}; expected a positive integer`);
    }
    const parsed = SamplingParamsSchema.safeParse(params);
    if (!parsed.success) {
      throw new InvalidArgumentError(`sample: invalid sampling params (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")})`);
    }
    const samplingParams: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(parsed.data)) if (v !== undefined && v !== null) samplingParams[k] = v;
    const body = {
      num_samples: numSamples,
      prompt,
      sampling_params: samplingParams,
      sampling_session_id: this.samplingSessionId,
      seq_id: this.seq++,
      prompt_logprobs: options.includePromptLogprobs ?? false,
      topk_prompt_logprobs: options.topkPromptLogprobs ?? 0,
      type: "sample",
    };
    const req: HttpRequest = {
      method: "POST",
      path: "/api/v1/asample",
      json: body,
      headers: { "X-Tinker-Sampling-Backpressure": "1", "X-Tinker-Request-Type": "Sample" },
      idempotencyKey: this.ctx.transport.newIdempotencyKey(),
    };
    const promptBytes = JSON.stringify(prompt).length;
    const delayOn429 = (): number => (promptBytes <= SMALL_PROMPT_BYTES ? 1000 : 5000);
    const submit = async (): Promise<string> => {
      const res = await this.ctx.send(req, { delayOn429 });
      const parsedId = res.body();
      const id = typeof parsedId === "object" && parsedId !== null ? (parsedId as Record<string, unknown>)["request_id"] : undefined;
      if (typeof id !== "string") throw new TinkerError(`unexpected response from POST /api/v1/asample: no request_id`);
      return id;
    };
    return this.semaphore.run(async () => {
      const requestId = await submit();
      return this.ctx.poll({
        requestId,
        parseJson: (v) => parseResponse(SampleResponseSchema, v, "sample result"),
        decodeProto: decodeSampleResponse,
        resubmit: submit,
      });
    });
  }

  async computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    const res = await this.sample(prompt, 1, { max_tokens: 1 }, { includePromptLogprobs: true });
    if (res.prompt_logprobs === undefined) throw new TinkerError("computeLogprobs: the server returned no prompt_logprobs");
    return res.prompt_logprobs;
  }
}
