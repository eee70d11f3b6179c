// SamplingClient over HTTP (docs/protocol.md#sampling-client): per-client seq_id from 0, backpressure-aware submission,
// protobuf or JSON results, and resubmission of expired requests.
import type { SampleOptions, SamplingClient } from "../clients.ts";
import { InvalidArgumentError, TinkerError } from "../errors.ts";
import { modelInputLength } from "../modelInput.ts";
import { SampleResponseSchema, SamplingParamsSchema, type ModelInput, type SampleResponse, type SamplingParams } from "../types.ts";
import { parseResponse, type HttpContext } from "./context.ts";
import { decodeSampleResponse } from "./proto/messages.ts";
import type { Semaphore } from "../../async/concurrency.ts";
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
    const res = await this.semaphore.run(async () => {
      const requestId = await submit();
      return this.ctx.poll({
        requestId,
        parseJson: (v) => parseResponse(SampleResponseSchema, v, "sample result"),
        decodeProto: decodeSampleResponse,
        resubmit: submit,
      });
    });
    return alignPromptLogprobs(res, prompt);
  }

  async computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    const res = await this.sample(prompt, 1, { max_tokens: 1 }, { includePromptLogprobs: true });
    if (res.prompt_logprobs === undefined) throw new TinkerError("computeLogprobs: the server returned no prompt_logprobs");
    return res.prompt_logprobs;
  }
}

/**
 * Prompt logprobs have one entry per prompt token, the first null (nothing predicts it). SkyRL tx
 * leaves that first entry out; it is put back here so callers can index by token position
 * whichever server answered. Any other length is an error rather than a silent misalignment.
 */
export function alignPromptLogprobs(res: SampleResponse, prompt: ModelInput): SampleResponse {
  if (res.prompt_logprobs === undefined && res.topk_prompt_logprobs === undefined) return res;
  let n: number;
  try {
    n = modelInputLength(prompt);
  } catch {
    // An image without expected_tokens: the prompt's length is only known to the server.
    return res;
  }
  const align = <T>(list: (T | null)[] | undefined, field: string): (T | null)[] | undefined => {
    if (list === undefined || list.length === n) return list;
    if (list.length === n - 1) return [null, ...list];
    throw new TinkerError(
      `sample result: ${field} has ${list.length} entries for a prompt of ${n} tokens; expected ${n} (or ${n - 1} without the leading null)`,
    );
  };
  const out: SampleResponse = { ...res };
  const lp = align(res.prompt_logprobs, "prompt_logprobs");
  if (lp !== undefined) out.prompt_logprobs = lp;
  const topk = align(res.topk_prompt_logprobs, "topk_prompt_logprobs");
  if (topk !== undefined) out.topk_prompt_logprobs = topk;
  return out;
}
