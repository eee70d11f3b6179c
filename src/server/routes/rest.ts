// REST endpoints (docs/protocol.md#rest-endpoints): training runs, checkpoints (the checkpoint id in URLs is the
// two-segment `weights/<name>` / `sampler_weights/<name>`), weights_info.
import { formatTinkerPath, type CheckpointKind } from "../../tinker/paths.ts";
import type { Checkpoint } from "../../tinker/types.ts";
import { ARCHIVE_URL_TTL_MS, tarFolder } from "../archives.ts";
import type { Call, Handler } from "../core.ts";
import { toHttpError } from "../errors.ts";
import { HttpError } from "../http.ts";
import { checkRunId, checkTinkerPath } from "../ids.ts";
import { WeightsInfoRequestSchema } from "../schemas.ts";

const runId = checkRunId;

function intQuery(call: Call, key: string, fallback: number, max: number): number {
  const raw = call.url.searchParams.get(key);
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new HttpError(400, `query parameter ${key}=${JSON.stringify(raw)} is invalid; expected an integer in [0, ${max}]`);
  return n;
}

async function rest<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toHttpError(err);
  }
}

export const listTrainingRuns: Handler = async (core, call) => {
  const limit = intQuery(call, "limit", 20, 1000);
  const offset = intQuery(call, "offset", 0, Number.MAX_SAFE_INTEGER);
  return { json: await rest(() => core.rest.listTrainingRuns({ limit, offset })) };
};

export const getTrainingRun: Handler = async (core, call) => {
  const id = runId(call.params[0]!);
  return { json: await rest(() => core.rest.getTrainingRun(id)) };
};

export const listCheckpoints: Handler = async (core, call) => {
  const id = runId(call.params[0]!);
  return { json: await rest(() => core.rest.listCheckpoints(id)) };
};

export const listUserCheckpoints: Handler = async (core, call) => {
  const limit = intQuery(call, "limit", 100, 1000);
  const offset = intQuery(call, "offset", 0, Number.MAX_SAFE_INTEGER);
  const all: Checkpoint[] = await rest(async () => {
    const runs = await core.rest.listTrainingRuns({ limit: Number.MAX_SAFE_INTEGER, offset: 0 });
    const out: Checkpoint[] = [];
    for (const r of runs.training_runs) out.push(...(await core.rest.listCheckpoints(r.training_run_id)).checkpoints);
    return out.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
  });
  return { json: { checkpoints: all.slice(offset, offset + limit), cursor: { offset, limit, total_count: all.length } } };
};

function checkpointPath(call: Call): string {
  const id = runId(call.params[0]!);
  let kind: string;
  let name: string;
  if (call.params.length === 3) {
    kind = call.params[1]!;
    name = call.params[2]!;
  } else {
    // A bare id names its kind with ?checkpoint_type=training|sampler.
    const type = call.url.searchParams.get("checkpoint_type");
    if (type !== "training" && type !== "sampler") {
      throw new HttpError(
        400,
        `checkpoint id ${JSON.stringify(call.params[1])} has no kind; use weights/<name> or sampler_weights/<name>, or pass checkpoint_type=training|sampler`,
      );
    }
    kind = type === "training" ? "weights" : "sampler_weights";
    name = call.params[1]!;
  }
  if (kind !== "weights" && kind !== "sampler_weights")
    throw new HttpError(400, `checkpoint kind ${JSON.stringify(kind)} is invalid; expected weights or sampler_weights`);
  try {
    return formatTinkerPath({ modelId: id, kind: kind as CheckpointKind, name });
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
}

export const deleteCheckpoint: Handler = async (core, call) => {
  const path = checkpointPath(call);
  await rest(() => core.rest.deleteCheckpointFromTinkerPath(path));
  return { status: 204 };
};

export const weightsInfo: Handler = async (core, call) => {
  const body = core.parse(call, WeightsInfoRequestSchema);
  try {
    checkTinkerPath(body.tinker_path);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  return { json: await rest(() => core.rest.getWeightsInfoByTinkerPath(body.tinker_path)) };
};

/** The checkpoint's tinker path from a `…/checkpoints/{kind}/{name}/archive` URL; 404 if it does not exist. */
function existingCheckpoint(core: Parameters<Handler>[0], call: Call): { path: string; dir: string } {
  const path = checkpointPath(call);
  const p = checkTinkerPath(path);
  const store = core.service.store;
  if (!store.exists(p.modelId, p.kind, p.name))
    throw new HttpError(404, `checkpoint ${path} not found; list the run's checkpoints with GET /api/v1/training_runs/${p.modelId}/checkpoints`);
  return { path, dir: store.checkpointDir(p.modelId, p.kind, p.name) };
}

/**
 * A signed URL for the checkpoint's tar archive, as `{url, expires}` (the SDK accepts this or a
 * 302; the JSON form keeps the answer a 2xx for clients that follow redirects themselves).
 */
export const checkpointArchive: Handler = (core, call) => {
  const { path } = existingCheckpoint(core, call);
  const expires = Date.now() + ARCHIVE_URL_TTL_MS;
  const host = call.req.headers.host ?? `${core.options.host}:${core.options.port}`;
  const url = `http://${host}/api/v1/checkpoint_archives/${core.archives.sign(path, expires)}`;
  return { json: { url, expires: new Date(expires).toISOString() }, headers: { Expires: new Date(expires).toUTCString() } };
};

/** The archive itself: a tar of the checkpoint folder's files, named `<name>.tar`. */
export const downloadArchive: Handler = (core, call) => {
  const path = core.archives.verify(call.params[0]!);
  const p = checkTinkerPath(path);
  const store = core.service.store;
  if (!store.exists(p.modelId, p.kind, p.name)) throw new HttpError(404, `checkpoint ${path} no longer exists`);
  const stream = tarFolder(store.checkpointDir(p.modelId, p.kind, p.name));
  return { stream, contentType: "application/x-tar", headers: { "Content-Disposition": `attachment; filename="${p.name}.tar"` } };
};
