// Request bodies the server accepts (spec §3, §4.4), as zod schemas over the wire records of
// src/tinker/types.ts. Unknown fields (such as the constant `type` tags) are ignored, as the
// service does; missing or mistyped fields are a 422 naming the field.
import { z } from "zod";
import {
  AdamParamsSchema,
  DatumSchema,
  LoraConfigSchema,
  LossFnNameSchema,
  ModelInputSchema,
  SamplingParamsSchema,
} from "../tinker/types.ts";

const SeqId = z.number().int().optional();
const ModelId = z.string().min(1);
const Metadata = z.record(z.string(), z.string()).nullable().optional();

export const CreateSessionSchema = z.object({
  tags: z.array(z.string()).optional(),
  user_metadata: Metadata,
  sdk_version: z.string().optional(),
  project_id: z.string().nullable().optional(),
});
export const SessionIdSchema = z.object({ session_id: z.string().min(1) });
export const CreateSamplingSessionSchema = z.object({
  session_id: z.string().min(1),
  sampling_session_seq_id: z.number().int().min(0),
  base_model: z.string().nullable().optional(),
  model_path: z.string().nullable().optional(),
});
export const CreateModelSchema = z.object({
  session_id: z.string().min(1),
  model_seq_id: z.number().int().min(0),
  base_model: z.string().min(1),
  user_metadata: Metadata,
  lora_config: LoraConfigSchema.optional(),
});
export const ModelIdSchema = z.object({ model_id: ModelId });
const FwdInput = z.object({
  data: z.array(DatumSchema).min(1, "data must hold at least one datum"),
  loss_fn: LossFnNameSchema,
  loss_fn_config: z.record(z.string(), z.number()).nullable().optional(),
});
export const ForwardBackwardSchema = z.object({ model_id: ModelId, seq_id: SeqId, forward_backward_input: FwdInput });
export const ForwardSchema = z.object({ model_id: ModelId, seq_id: SeqId, forward_input: FwdInput });
export const OptimStepSchema = z.object({ model_id: ModelId, seq_id: SeqId, adam_params: AdamParamsSchema });
export const SaveWeightsSchema = z.object({
  model_id: ModelId,
  seq_id: SeqId,
  path: z.string().nullable().optional(),
  ttl_seconds: z.number().positive().nullable().optional(),
  overwrite: z.boolean().optional(),
});
export const SaveWeightsForSamplerSchema = z.object({
  model_id: ModelId,
  seq_id: SeqId,
  path: z.string().nullable().optional(),
  sampling_session_seq_id: z.number().int().min(0).nullable().optional(),
  ttl_seconds: z.number().positive().nullable().optional(),
});
export const LoadWeightsSchema = z.object({
  model_id: ModelId,
  seq_id: SeqId,
  path: z.string().min(1),
  optimizer: z.boolean().optional(),
});
export const SampleSchema = z.object({
  num_samples: z.number().int().min(1).max(1024).default(1),
  prompt: ModelInputSchema,
  sampling_params: SamplingParamsSchema,
  base_model: z.string().nullable().optional(),
  model_path: z.string().nullable().optional(),
  sampling_session_id: z.string().nullable().optional(),
  seq_id: z.number().int().nullable().optional(),
  prompt_logprobs: z.boolean().nullable().optional(),
  topk_prompt_logprobs: z.number().int().min(0).default(0),
});
export const RetrieveFutureSchema = z.object({ request_id: z.string().min(1), allow_metadata_only: z.boolean().optional() });
export const WeightsInfoRequestSchema = z.object({ tinker_path: z.string().min(1) });
