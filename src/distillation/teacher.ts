// Teachers are sampling clients: a base model (name or local folder), a sampler checkpoint
// (tinker://…/sampler_weights/…), or either of those on another server when the teacher has its
// own base_url. The student's service client serves the teacher unless base_url says otherwise.
import { z } from "zod";
import { createServiceClient } from "../service.ts";
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";

export const TeacherConfigSchema = z.object({
  base_model: z.string().min(1).describe("Teacher model: a model name or a local Hugging Face folder"),
  load_checkpoint_path: z.string().nullable().default(null)
    .describe("A tinker:// sampler checkpoint of the teacher (null: the base model's own weights)"),
  base_url: z.string().nullable().default(null)
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
    const client = config.load_checkpoint_path !== null
      ? await service.createSamplingClient({ modelPath: config.load_checkpoint_path, baseModel: config.base_model })
      : await service.createSamplingClient({ baseModel: config.base_model });
    return { config, client, close: async () => { if (own !== null) await own.close(); } };
  } catch (err) {
    if (own !== null) await own.close();
    const what = config.load_checkpoint_path ?? config.base_model;
    throw new Error(`teacher ${JSON.stringify(what)}${config.base_url !== null ? ` at ${config.base_url}` : ""}: ${(err as Error).message}`, { cause: err });
  }
}
