// RestClient over HTTP (spec §2.5): session-less queries about training runs and checkpoints.
import { z } from "zod";
import type { RestClient } from "../clients.ts";
import { parseTinkerPath } from "../paths.ts";
import {
  CheckpointsListSchema,
  TrainingRunSchema,
  TrainingRunsListSchema,
  WeightsInfoSchema,
  type CheckpointsList,
  type TrainingRun,
  type TrainingRunsList,
  type WeightsInfo,
} from "../types.ts";
import type { HttpContext } from "./context.ts";

const seg = encodeURIComponent;

export class HttpRestClient implements RestClient {
  constructor(private readonly ctx: HttpContext) {}

  listTrainingRuns(options: { limit?: number; offset?: number; accessScope?: "owned" | "accessible" } = {}): Promise<TrainingRunsList> {
    return this.ctx.call(
      {
        method: "GET",
        path: "/api/v1/training_runs",
        query: { limit: options.limit ?? 20, offset: options.offset ?? 0, access_scope: options.accessScope ?? "owned" },
      },
      TrainingRunsListSchema,
    );
  }

  getTrainingRun(trainingRunId: string, accessScope: "owned" | "accessible" = "owned"): Promise<TrainingRun> {
    return this.ctx.call(
      { method: "GET", path: `/api/v1/training_runs/${seg(trainingRunId)}`, query: { access_scope: accessScope } },
      TrainingRunSchema,
    );
  }

  async getTrainingRunByTinkerPath(tinkerPath: string): Promise<TrainingRun> {
    return this.getTrainingRun(parseTinkerPath(tinkerPath).modelId);
  }

  listCheckpoints(trainingRunId: string): Promise<CheckpointsList> {
    return this.ctx.call({ method: "GET", path: `/api/v1/training_runs/${seg(trainingRunId)}/checkpoints` }, CheckpointsListSchema);
  }

  listUserCheckpoints(options: { limit?: number; offset?: number } = {}): Promise<CheckpointsList> {
    return this.ctx.call(
      { method: "GET", path: "/api/v1/checkpoints", query: { limit: options.limit ?? 100, offset: options.offset ?? 0 } },
      CheckpointsListSchema,
    );
  }

  async deleteCheckpointFromTinkerPath(tinkerPath: string): Promise<void> {
    const p = parseTinkerPath(tinkerPath);
    // The checkpoint id is two segments (`weights/<name>`), so the URL has an extra slash.
    await this.ctx.send({
      method: "DELETE",
      path: `/api/v1/training_runs/${seg(p.modelId)}/checkpoints/${p.kind}/${seg(p.name)}`,
    });
  }

  async getWeightsInfoByTinkerPath(tinkerPath: string): Promise<WeightsInfo> {
    parseTinkerPath(tinkerPath);
    return this.ctx.call({ method: "POST", path: "/api/v1/weights_info", json: { tinker_path: tinkerPath } }, WeightsInfoSchema);
  }

  getSampler(samplerId: string): Promise<{ sampler_id: string; base_model: string; model_path?: string | null }> {
    return this.ctx.call(
      { method: "GET", path: `/api/v1/samplers/${seg(samplerId)}` },
      z.object({ sampler_id: z.string(), base_model: z.string(), model_path: z.string().nullable().optional() }),
    );
  }
}
