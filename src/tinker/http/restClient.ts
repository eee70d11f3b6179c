// RestClient over HTTP (docs/protocol.md#rest-endpoints): session-less queries about training runs and checkpoints.
import type { RestClient } from "../clients.ts";
import { parseTinkerPath } from "../paths.ts";
import {
  CheckpointArchiveUrlResponseSchema,
  CheckpointsListSchema,
  GetSamplerResponseSchema,
  TrainingRunSchema,
  TrainingRunsListSchema,
  WeightsInfoSchema,
  type CheckpointsList,
  type GetSamplerResponse,
  type TrainingRun,
  type TrainingRunsList,
  type WeightsInfo,
} from "../types.ts";
import { APIStatusError } from "../errors.ts";
import { parseResponse, type HttpContext } from "./context.ts";

const ARCHIVE_TRIES = 6;
const ARCHIVE_WAIT_MS = 30_000;

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
    return this.ctx.call({ method: "GET", path: `/api/v1/training_runs/${seg(trainingRunId)}`, query: { access_scope: accessScope } }, TrainingRunSchema);
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

  /** A signed download URL for a checkpoint archive (redirect not followed; 503 = still packing). */
  async getCheckpointArchiveUrlFromTinkerPath(tinkerPath: string): Promise<{ url: string; expires: Date }> {
    const p = parseTinkerPath(tinkerPath);
    const full = `${p.kind}/${seg(p.name)}`;
    // SkyRL tx's archive route takes the bare name of a sampler checkpoint; the short path form is
    // its own, and a full-form sampler path that is unknown under its kind is tried bare too.
    const ids = p.kind !== "sampler_weights" ? [full] : p.form === "short" ? [seg(p.name), full] : [full, seg(p.name)];
    for (let i = 0; ; i++) {
      try {
        return await this.archiveUrl(`/api/v1/training_runs/${seg(p.modelId)}/checkpoints/${ids[i]!}/archive`);
      } catch (err) {
        if (err instanceof APIStatusError && err.status === 404 && i + 1 < ids.length) continue;
        // SkyRL tx archives sampler checkpoints only; its router answers a training one with 405.
        if (err instanceof APIStatusError && p.kind === "weights" && (err.status === 404 || err.status === 405)) {
          throw new APIStatusError(
            `${err.message}; the server at ${this.ctx.opts.baseUrl} offers no archive of this training checkpoint (SkyRL tx archives sampler checkpoints only): download the run's sampler checkpoint of the same name instead`,
            err.status,
            err.body,
          );
        }
        throw err;
      }
    }
  }

  private async archiveUrl(path: string): Promise<{ url: string; expires: Date }> {
    const req = { method: "GET" as const, path, headers: { Accept: "application/json" } };
    const defaultExpiry = (): Date => new Date(this.ctx.clock.now() + 15 * 60_000);
    for (let attempt = 1; ; attempt++) {
      const res = await this.ctx.send(req, { budgetMs: 0 }).catch((err: unknown) => {
        if (err instanceof APIStatusError && err.status === 503 && attempt < ARCHIVE_TRIES) return undefined;
        throw err;
      });
      if (res === undefined) {
        await this.ctx.clock.sleep(ARCHIVE_WAIT_MS);
        continue;
      }
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location !== null) {
        const exp = res.headers.get("expires");
        const d = exp === null ? undefined : new Date(exp);
        return { url: location, expires: d !== undefined && !Number.isNaN(d.getTime()) ? d : defaultExpiry() };
      }
      const body = parseResponse(CheckpointArchiveUrlResponseSchema, res.body(), `GET ${req.path}`);
      return { url: body.url, expires: body.expires !== undefined ? new Date(body.expires) : defaultExpiry() };
    }
  }

  getSampler(samplerId: string): Promise<GetSamplerResponse> {
    return this.ctx.call({ method: "GET", path: `/api/v1/samplers/${seg(samplerId)}` }, GetSamplerResponseSchema);
  }
}
