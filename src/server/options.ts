// Options of `cookbook serve` / startServer: one zod schema for types, defaults and help text.
import { z } from "zod";
import type { ResolveOptions } from "../engine/index.ts";
import type { SamplingClient } from "../tinker/clients.ts";

export const ServeOptionsSchema = z.object({
  host: z.string().min(1).default("127.0.0.1").describe("Address to bind; anything but loopback requires an API key"),
  port: z.number().int().min(0).max(65535).default(8000).describe("Port to listen on (0 picks a free one)"),
  apiKey: z
    .string()
    .min(8, "the API key must be at least 8 characters")
    .optional()
    .describe("Require this X-API-Key on every request but healthz (default: $COOKBOOK_SERVE_API_KEY; none on loopback)"),
  storeDir: z.string().min(1).optional().describe("Checkpoint store folder (default $COOKBOOK_HOME/checkpoints)"),
  kernels: z.enum(["native", "reference"]).optional().describe("Kernel implementation of the embedded engine"),
  sessionTimeoutSec: z.number().positive().default(300).describe("Unload a session's models after this long without a heartbeat"),
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024)
    .describe("Largest request body accepted (413 above)"),
  longPollSec: z.number().min(0).default(30).describe("How long retrieve_future waits for a result before answering 408"),
  maxSamplersPerSession: z.number().int().positive().default(64).describe("Samplers kept per session; the least recently used one is released beyond this"),
  futureRetentionSec: z.number().positive().default(600).describe("How long a finished result nobody has fetched stays retrievable"),
  deliveredRetentionSec: z.number().positive().default(60).describe("How long a result stays retrievable after it was handed out (for a repeated poll)"),
  maxSampleTokens: z
    .number()
    .int()
    .positive()
    .default(131_072)
    .describe(
      "Largest num_samples × (prompt + max_tokens) one sample request may ask for (400 above); also the engine work in flight before other sessions' requests get their turn",
    ),
  seqGapTimeoutSec: z
    .number()
    .positive()
    .default(120)
    .describe("How long a model's later requests wait for a missing seq_id before they fail with an error naming the gap"),
  models: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .describe("Serve only these base models (training and base-model sampling); default: every model the engine finds"),
  maxLoraRank: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Largest LoRA rank create_model accepts (advertised as max_lora_rank in get_server_capabilities)"),
  topkPromptLogprobs: z.boolean().default(true).describe("Answer top-k prompt logprobs; false refuses them with a 400, as SkyRL tx's JAX backend does"),
});

export type ServeOptions = z.input<typeof ServeOptionsSchema>;
export type ResolvedServeOptions = z.output<typeof ServeOptionsSchema>;

/** What code and tests may add beyond the configurable options. */
export interface ServeHooks {
  /** How base model names are found (environment, fixtures folder). */
  resolve?: ResolveOptions;
  /** Where the server's own lines go (default stderr). Never receives the API key. */
  log?: (line: string) => void;
  /**
   * Wraps the sampler behind an OpenAI `model` (tests script a model's reply, e.g. a tool call a
   * tiny random model would never write, to exercise the parsing path end to end).
   */
  wrapOpenAISampler?: (client: SamplingClient, model: string) => SamplingClient;
}
