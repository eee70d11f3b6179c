// Teachers are sampling clients: a base model (name or local folder), a sampler checkpoint
// (tinker://…/sampler_weights/…), or either of those on another server when the teacher has its
// own base_url. The student's server serves the teacher unless base_url says otherwise; a teacher
// on a remote server rides out that server going away (training/reconnectingSampler.ts).
import { z } from "zod";
import { chooseEngine, createServiceClient } from "../service.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { checkServerServes, describeServer, requireTopkPromptLogprobs } from "../training/capabilities.ts";
import { openSampler, type SamplerSource } from "../training/reconnectingSampler.ts";

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
  /** Releases what was opened for this teacher alone (nothing when it shares the student's engine). */
  close(): Promise<void>;
}

/** Where the teacher is served: its own base_url, else the student's server. */
function teacherSource<S extends Pick<SamplerSource, "baseUrl">>(student: S, config: TeacherConfig): S {
  return config.base_url === null ? student : { ...student, baseUrl: config.base_url };
}

/**
 * The teacher's sampling client: on the student's embedded engine when both are local, otherwise a
 * connection of its own that waits for its server and reconnects when the server goes away.
 */
export async function createTeacher(student: SamplerSource, config: TeacherConfig): Promise<Teacher> {
  const target = { baseModel: config.base_model, ...(config.load_checkpoint_path !== null ? { modelPath: config.load_checkpoint_path } : {}) };
  try {
    const { client, close } = await openSampler(teacherSource(student, config), target, "teacher");
    return { config, client, close };
  } catch (err) {
    const what = config.load_checkpoint_path ?? config.base_model;
    throw new Error(`teacher ${JSON.stringify(what)}${config.base_url !== null ? ` at ${config.base_url}` : ""}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Refuses before training when the teacher's server cannot serve it: its base model not served
 * (sampling the base weights), or no top-k prompt logprobs when `topk` > 0 (asked once, on a
 * two-token prompt). The embedded engine is not asked; it has both.
 */
export async function checkTeacher(student: Pick<SamplerSource, "baseUrl">, config: TeacherConfig, needs: { recipe: string; topk?: number }): Promise<void> {
  const source = teacherSource(student, config);
  const options = source.baseUrl !== null ? { baseUrl: source.baseUrl } : {};
  if (chooseEngine(options).kind === "embedded") return;
  const service = await createServiceClient(options);
  try {
    if (config.load_checkpoint_path === null) {
      await checkServerServes(service, { model: config.base_model, field: "teacher.base_model", recipe: needs.recipe });
    }
    if (needs.topk !== undefined && needs.topk > 0) {
      // A probe, not a run: no waiting for a server that goes away meanwhile.
      const teacher = await createTeacher({ ...source, shared: service, waitMs: 0, log: { warn: () => undefined } }, config);
      try {
        await requireTopkPromptLogprobs(teacher.client, needs.topk, {
          recipe: needs.recipe,
          server: describeServer(service),
          role: "the teacher's soft targets",
          alternatives:
            "Serve the teacher where they are available: teacher.base_url=local (the embedded engine on this machine), the hosted Tinker service, or `cookbook serve`; " +
            "or distill on-policy (on_policy_distillation needs only the teacher's logprob of each sampled token).",
        });
      } finally {
        await teacher.close();
      }
    }
  } finally {
    await service.close();
  }
}
