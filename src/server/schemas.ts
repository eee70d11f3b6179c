// Request bodies the server accepts (docs/protocol.md#request-serialisation, docs/protocol.md#endpoints), as zod schemas over the wire records of
// src/tinker/types.ts. Every schema is wrapped in `wireRequest`, which accepts both SDK
// serialisations (null = unset, omitted fields take their defaults, chunks without `type`).
// Unknown fields (such as the constant `type` tags) are ignored, as the service does; missing or
// mistyped fields are a 422 naming the field.
import { z } from "zod";
import { AdamParamsSchema, DatumSchema, LoraConfigSchema, LossFnNameSchema, ModelInputSchema, SamplingParamsSchema, wireRequest } from "../tinker/types.ts";

const SeqId = z.number().int().optional();
const ModelId = z.string().min(1);
const Metadata = z.record(z.string(), z.string()).optional();

export const CreateSessionSchema = wireRequest(
  z.object({
    tags: z.array(z.string()).optional(),
    user_metadata: Metadata,
    sdk_version: z.string().optional(),
    project_id: z.string().optional(),
  }),
);
export const SessionIdSchema = wireRequest(z.object({ session_id: z.string().min(1) }));
export const CreateSamplingSessionSchema = wireRequest(
  z.object({
    session_id: z.string().min(1),
    sampling_session_seq_id: z.number().int().min(0),
    base_model: z.string().optional(),
    model_path: z.string().optional(),
  }),
);
export const CreateModelSchema = wireRequest(
  z.object({
    session_id: z.string().min(1),
    model_seq_id: z.number().int().min(0),
    base_model: z.string().min(1),
    user_metadata: Metadata,
    lora_config: LoraConfigSchema.optional(),
  }),
);
export const ModelIdSchema = wireRequest(z.object({ model_id: ModelId }));
const FwdInput = z.object({
  data: z.array(DatumSchema).min(1, "data must hold at least one datum"),
  loss_fn: LossFnNameSchema,
  loss_fn_config: z.record(z.string(), z.number()).optional(),
});
export const ForwardBackwardSchema = wireRequest(z.object({ model_id: ModelId, seq_id: SeqId, forward_backward_input: FwdInput }));
export const ForwardSchema = wireRequest(z.object({ model_id: ModelId, seq_id: SeqId, forward_input: FwdInput }));
export const OptimStepSchema = wireRequest(z.object({ model_id: ModelId, seq_id: SeqId, adam_params: AdamParamsSchema }));
export const SaveWeightsSchema = wireRequest(
  z.object({
    model_id: ModelId,
    seq_id: SeqId,
    path: z.string().optional(),
    ttl_seconds: z.number().positive().optional(),
    overwrite: z.boolean().default(false),
  }),
);
export const SaveWeightsForSamplerSchema = wireRequest(
  z.object({
    model_id: ModelId,
    seq_id: SeqId,
    path: z.string().optional(),
    sampling_session_seq_id: z.number().int().min(0).optional(),
    ttl_seconds: z.number().positive().optional(),
  }),
);
export const LoadWeightsSchema = wireRequest(
  z.object({
    model_id: ModelId,
    seq_id: SeqId,
    path: z.string().min(1),
    optimizer: z.boolean().default(false),
  }),
);
export const SampleSchema = wireRequest(
  z.object({
    num_samples: z.number().int().min(1).max(1024).default(1),
    prompt: ModelInputSchema,
    sampling_params: SamplingParamsSchema,
    base_model: z.string().optional(),
    model_path: z.string().optional(),
    sampling_session_id: z.string().optional(),
    seq_id: z.number().int().optional(),
    prompt_logprobs: z.boolean().default(false),
    topk_prompt_logprobs: z.number().int().min(0).default(0),
  }),
);
export const RetrieveFutureSchema = wireRequest(z.object({ request_id: z.string().min(1), allow_metadata_only: z.boolean().default(false) }));
export const WeightsInfoRequestSchema = wireRequest(z.object({ tinker_path: z.string().min(1) }));
