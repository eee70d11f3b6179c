// Wire records of the Tinker API (docs/protocol.md#request-serialisation and the sections after it) as zod schemas: the single source
// for the TypeScript types, for validating what a server or engine receives, and for defaults.
import { z } from "zod";

export const EncodedTextChunkSchema = z.object({
  type: z.literal("encoded_text"),
  tokens: z.array(z.number().int()),
});
export const ImageChunkSchema = z.object({
  type: z.literal("image"),
  data: z.string().describe("base64-encoded image bytes"),
  format: z.enum(["png", "jpeg"]),
  expected_tokens: z.number().int().optional(),
});
export const ImageAssetPointerChunkSchema = z.object({
  type: z.literal("image_asset_pointer"),
  location: z.string(),
  format: z.enum(["png", "jpeg"]),
  expected_tokens: z.number().int().optional(),
});
/**
 * SDK 0.3–0.16 omit a chunk's `type` (it is only a default there), so a chunk without one is
 * recognised by its fields, as SkyRL does: `tokens` → encoded_text, `location` → image_asset_pointer,
 * `data` → image. The ≥ 0.18 form (and what our client sends) carries the tag.
 */
function inferChunkType(chunk: unknown): unknown {
  if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk) || "type" in chunk) return chunk;
  const c = chunk as Record<string, unknown>;
  if ("tokens" in c) return { ...c, type: "encoded_text" };
  if ("location" in c) return { ...c, type: "image_asset_pointer" };
  if ("data" in c) return { ...c, type: "image" };
  return chunk;
}
export const ModelInputChunkSchema = z.preprocess(
  inferChunkType,
  z.discriminatedUnion("type", [EncodedTextChunkSchema, ImageChunkSchema, ImageAssetPointerChunkSchema]),
);
export const ModelInputSchema = z.object({ chunks: z.array(ModelInputChunkSchema) });

export const TensorDTypeSchema = z.enum(["int64", "float32"]);
export const TensorDataSchema = z.object({
  data: z.array(z.number()),
  dtype: TensorDTypeSchema,
  shape: z.array(z.number().int()).optional(),
  sparse_crow_indices: z.array(z.number().int()).optional(),
  sparse_col_indices: z.array(z.number().int()).optional(),
});

export const DatumSchema = z.object({
  model_input: ModelInputSchema,
  loss_fn_inputs: z.record(z.string(), TensorDataSchema),
});

/**
 * The two ways SDKs serialise a request body (docs/protocol.md#request-serialisation), normalised to one (the HTTP client reads
 * every response through it too, since servers differ in the same way): SDK 0.3–0.16 send
 * fields the caller set to `None` as `null` and omit unset defaults; SDK ≥ 0.18 omit `None` and
 * send defaults. A `null` object field therefore means "unset" and is dropped here, after which
 * the schemas' own defaults fill every omitted field. Array elements are left alone (a `null`
 * inside a list is data). Every request schema of the server is wrapped in `wireRequest`.
 */
export function dropNullFields(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    // Number arrays (token ids, tensor data) are the bulk of a body and need no walk.
    if (value.length === 0 || typeof value[0] === "number") return value;
    return value.map(dropNullFields);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNullFields(v);
  return out;
}

/** A request body schema that accepts both SDK serialisations (see dropNullFields). */
export function wireRequest<S extends z.ZodType>(schema: S) {
  return z.preprocess(dropNullFields, schema);
}

export const LossFnNameSchema = z.enum(["cross_entropy", "importance_sampling", "ppo", "cispo", "dro"]);

export const SamplingParamsSchema = z.object({
  max_tokens: z.number().int().optional(),
  seed: z.number().int().optional(),
  stop: z
    .union([z.string(), z.array(z.string()), z.array(z.number().int())])
    .nullable()
    .optional(),
  temperature: z.number().default(1),
  top_k: z.number().int().default(-1),
  top_p: z.number().default(1),
});

export const StopReasonSchema = z.enum(["stop", "length"]);
export const SampledSequenceSchema = z.object({
  stop_reason: StopReasonSchema,
  tokens: z.array(z.number().int()),
  logprobs: z.array(z.number()).optional(),
});
export const SampleResponseSchema = z.object({
  type: z.literal("sample").optional(),
  sequences: z.array(SampledSequenceSchema),
  prompt_logprobs: z.array(z.number().nullable()).optional(),
  topk_prompt_logprobs: z.array(z.array(z.tuple([z.number().int(), z.number()])).nullable()).optional(),
  /** Prompt tokens billed as prefix-cache hits (protobuf responses only). */
  prompt_cache_hit_tokens: z.number().int().optional(),
});

export const ForwardBackwardInputSchema = z.object({
  data: z.array(DatumSchema),
  loss_fn: LossFnNameSchema,
  loss_fn_config: z.record(z.string(), z.number()).optional(),
});
export const ForwardBackwardOutputSchema = z.object({
  loss_fn_output_type: z.string(),
  loss_fn_outputs: z.array(z.record(z.string(), TensorDataSchema)),
  /** Required before SDK 0.25, a default since; some servers leave it out when there is none. */
  metrics: z.record(z.string(), z.number()).default({}),
});

export const AdamParamsSchema = z.object({
  learning_rate: z.number().min(0).default(1e-4),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.95),
  eps: z.number().positive().default(1e-12),
  weight_decay: z.number().min(0).default(0),
  grad_clip_norm: z.number().min(0).default(0),
});
export const OptimStepResponseSchema = z.object({ metrics: z.record(z.string(), z.number()).optional() });

export const LoraConfigSchema = z.object({
  rank: z.number().int().positive().default(32),
  seed: z.number().int().optional(),
  train_unembed: z.boolean().default(true),
  train_mlp: z.boolean().default(true),
  train_attn: z.boolean().default(true),
});

export const CheckpointTypeSchema = z.enum(["training", "sampler"]);
export const CheckpointSchema = z.object({
  checkpoint_id: z.string(),
  checkpoint_type: CheckpointTypeSchema,
  time: z.string(),
  tinker_path: z.string(),
  size_bytes: z.number().int().optional(),
  public: z.boolean().default(false),
  expires_at: z.string().nullable().optional(),
});
export const TrainingRunSchema = z.object({
  training_run_id: z.string(),
  base_model: z.string(),
  model_owner: z.string(),
  is_lora: z.boolean(),
  corrupted: z.boolean().default(false),
  lora_rank: z.number().int().nullable().optional(),
  last_request_time: z.string(),
  last_checkpoint: CheckpointSchema.nullable().optional(),
  last_sampler_checkpoint: CheckpointSchema.nullable().optional(),
  user_metadata: z.record(z.string(), z.string()).nullable().optional(),
});
export const WeightsInfoSchema = z.object({
  base_model: z.string(),
  is_lora: z.boolean(),
  lora_rank: z.number().int().nullable().optional(),
  train_unembed: z.boolean().nullable().optional(),
  train_mlp: z.boolean().nullable().optional(),
  train_attn: z.boolean().nullable().optional(),
});
export const GetInfoResponseSchema = z.object({
  model_id: z.string(),
  model_data: z.object({
    arch: z.string().optional(),
    model_name: z.string().optional(),
    tokenizer_id: z.string().optional(),
  }),
  is_lora: z.boolean().optional(),
  lora_rank: z.number().int().optional(),
  model_name: z.string().optional(),
});
export const ServerCapabilitiesSchema = z.object({
  supported_models: z.array(z.object({ model_name: z.string().optional(), max_context_length: z.number().int().optional() })),
  /** `cookbook serve --max-lora-rank`'s ceiling; the hosted service and SkyRL tx do not say. */
  max_lora_rank: z.number().int().positive().optional(),
});
export const SaveWeightsResponseSchema = z.object({ path: z.string() });
export const LoadWeightsResponseSchema = z.object({ path: z.string().optional(), model_id: z.string().optional() });
export const SaveWeightsForSamplerResponseSchema = z.object({
  path: z.string().optional(),
  sampling_session_id: z.string().optional(),
});
export const CheckpointsListSchema = z.object({
  checkpoints: z.array(CheckpointSchema),
  cursor: z.object({ offset: z.number().int(), limit: z.number().int(), total_count: z.number().int() }).optional(),
});
export const TrainingRunsListSchema = z.object({
  training_runs: z.array(TrainingRunSchema),
  cursor: z.object({ offset: z.number().int(), limit: z.number().int(), total_count: z.number().int() }),
});
/** The first answer of every future-returning request. */
export const UntypedFutureSchema = z.object({ request_id: z.string(), model_id: z.string().optional() });
export const CreateModelResponseSchema = z.object({ model_id: z.string() });
export const CreateSessionResponseSchema = z.object({
  session_id: z.string(),
  info_message: z.string().nullable().optional(),
  warning_message: z.string().nullable().optional(),
  error_message: z.string().nullable().optional(),
});
export const CreateSamplingSessionResponseSchema = z.object({ sampling_session_id: z.string() });
export const GetSamplerResponseSchema = z.object({ sampler_id: z.string(), base_model: z.string(), model_path: z.string().nullable().optional() });
export const CheckpointArchiveUrlResponseSchema = z.object({ url: z.string(), expires: z.string().optional() });

/**
 * Every JSON answer the HTTP client reads, by name. The client reads them all through
 * `parseResponse` (src/tinker/http/context.ts), which treats `null` like an absent field before
 * the schema sees it; test/tinker/http/responses.test.ts feeds each one its documented shape.
 */
export const RESPONSE_SCHEMAS = {
  UntypedFuture: UntypedFutureSchema,
  CreateSessionResponse: CreateSessionResponseSchema,
  CreateModelResponse: CreateModelResponseSchema,
  CreateSamplingSessionResponse: CreateSamplingSessionResponseSchema,
  GetSamplerResponse: GetSamplerResponseSchema,
  ServerCapabilities: ServerCapabilitiesSchema,
  GetInfoResponse: GetInfoResponseSchema,
  ForwardBackwardOutput: ForwardBackwardOutputSchema,
  OptimStepResponse: OptimStepResponseSchema,
  SaveWeightsResponse: SaveWeightsResponseSchema,
  LoadWeightsResponse: LoadWeightsResponseSchema,
  SaveWeightsForSamplerResponse: SaveWeightsForSamplerResponseSchema,
  SampleResponse: SampleResponseSchema,
  WeightsInfo: WeightsInfoSchema,
  TrainingRun: TrainingRunSchema,
  TrainingRunsList: TrainingRunsListSchema,
  CheckpointsList: CheckpointsListSchema,
  CheckpointArchiveUrlResponse: CheckpointArchiveUrlResponseSchema,
} as const;

export type EncodedTextChunk = z.infer<typeof EncodedTextChunkSchema>;
export type ModelInputChunk = z.infer<typeof ModelInputChunkSchema>;
export type ModelInput = z.infer<typeof ModelInputSchema>;
export type TensorDType = z.infer<typeof TensorDTypeSchema>;
export type TensorData = z.infer<typeof TensorDataSchema>;
export type Datum = z.infer<typeof DatumSchema>;
export type LossFnName = z.infer<typeof LossFnNameSchema>;
export type SamplingParams = z.input<typeof SamplingParamsSchema>;
export type StopReason = z.infer<typeof StopReasonSchema>;
export type SampledSequence = z.infer<typeof SampledSequenceSchema>;
export type SampleResponse = z.infer<typeof SampleResponseSchema>;
export type ForwardBackwardInput = z.infer<typeof ForwardBackwardInputSchema>;
export type ForwardBackwardOutput = z.infer<typeof ForwardBackwardOutputSchema>;
/** What callers pass: every field optional, the service's defaults fill the rest. */
export type AdamParams = z.input<typeof AdamParamsSchema>;
export type ResolvedAdamParams = z.output<typeof AdamParamsSchema>;
export type OptimStepResponse = z.infer<typeof OptimStepResponseSchema>;
export type LoraConfig = z.input<typeof LoraConfigSchema>;
export type ResolvedLoraConfig = z.output<typeof LoraConfigSchema>;
export type CheckpointType = z.infer<typeof CheckpointTypeSchema>;
export type Checkpoint = z.infer<typeof CheckpointSchema>;
export type TrainingRun = z.infer<typeof TrainingRunSchema>;
export type WeightsInfo = z.infer<typeof WeightsInfoSchema>;
export type GetInfoResponse = z.infer<typeof GetInfoResponseSchema>;
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;
export type SaveWeightsResponse = z.infer<typeof SaveWeightsResponseSchema>;
export type LoadWeightsResponse = z.infer<typeof LoadWeightsResponseSchema>;
export type SaveWeightsForSamplerResponse = z.infer<typeof SaveWeightsForSamplerResponseSchema>;
export type CheckpointsList = z.infer<typeof CheckpointsListSchema>;
export type TrainingRunsList = z.infer<typeof TrainingRunsListSchema>;
export type GetSamplerResponse = z.infer<typeof GetSamplerResponseSchema>;
