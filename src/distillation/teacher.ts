// Teachers are sampling clients: a base model (name or local folder), a sampler checkpoint
// (tinker://…/sampler_weights/…), or either of those on another server when the teacher has its
// own base_url. The student's service client serves the teacher unless base_url says otherwise.
import { z } from "zod";
import { createServiceClient } from "../service.ts";
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";
import { checkServerServes, describeServer, requireTopkPromptLogprobs } from "../training/capabilities.ts";

export const TeacherConfigSchema = z.object({
  base_model: z.string().min(1).describe("Teacher model: a model name or a local Hugging Face folder"),
  load_checkpoint_path: z.string().nullable().default(null).describe("A tinker:// sampler checkpoint of the teacher (null: the base model's own weights)"),
  base_url: z
    .string()
    .nullable()
    .default(null)
    .describe("Server of the teacher when it is not the student's (an http(s) URL, or \"local\" for the embedded engine); null: the student's"),
});
export type TeacherConfig = z.output<typeof TeacherConfigSchema>;

export interface Teacher {
  readonly config: TeacherConfig;
  readonly client: SamplingClient;
  /** Releases a service client made for this teacher alone (no-op when it shares the student's). */
  close(): Promise<void>;
}

/** A sampling client for `config`, on `serviceClient` unless the teacher names its own base_url. */
export async function createTeacher(serviceClient: ServiceClient, config: TeacherConfig): Promise<Teacher> {
  const own = config.base_url !== null ? await createServiceClient({ baseUrl: config.base_url }) : null;
  const service = own ?? serviceClient;
  try {
    const client =
      config.load_checkpoint_path !== null
        ? await service.createSamplingClient({ modelPath: config.load_checkpoint_path, baseModel: config.base_model })
        : await service.createSamplingClient({ baseModel: config.base_model });
    return {
      config,
      client,
      close: async () => {
        if (own !== null) await own.close();
      },
    };
  } catch (err) {
    if (own !== null) await own.close();
    const what = config.load_checkpoint_path ?? config.base_model;
    throw new Error(`teacher ${JSON.stringify(what)}${config.base_url !== null ? ` at ${config.base_url}` : ""}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Refuses before training when the teacher's server cannot serve it: its base model not served
 * (sampling the base weights), or no top-k prompt logprobs when `topk` > 0 (asked once, on a
 * two-token prompt). The embedded engine is not asked; it has both.
 */
export async function checkTeacher(serviceClient: ServiceClient, config: TeacherConfig, needs: { recipe: string; topk?: number }): Promise<void> {
  const own = config.base_url !== null ? await createServiceClient({ baseUrl: config.base_url }) : null;
  const service = own ?? serviceClient;
  try {
    if (service.engineKind === "embedded") return;
    if (config.load_checkpoint_path === null) {
      await checkServerServes(service, { model: config.base_model, field: "teacher.base_model", recipe: needs.recipe });
    }
    if (needs.topk !== undefined && needs.topk > 0) {
      const teacher = await createTeacher(service, config);
      await requireTopkPromptLogprobs(teacher.client, needs.topk, {
        recipe: needs.recipe,
        server: describeServer(service),
        role: "the teacher's soft targets",
        alternatives:
          "Serve the teacher where they are available: teacher.base_url=local (the embedded engine on this machine), the hosted Tinker service, or `cookbook serve`; " +
          "or distill on-policy (on_policy_distillation needs only the teacher's logprob of each sampled token).",
      });
    }
  } finally {
    if (own !== null) await own.close();
  }
}
