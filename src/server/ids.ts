// Ids that reach the filesystem (training run ids, tinker:// paths) are checked here before any
// handler uses them, so a crafted id is a 400 rather than something the store has to catch.
import { InvalidArgumentError } from "../tinker/errors.ts";
import { parseTinkerPath, type TinkerPath } from "../tinker/paths.ts";
import { HttpError } from "./http.ts";

const RUN_ID_RE = /^[A-Za-z0-9_.:-]+$/;

export function checkRunId(raw: string): string {
  if (!RUN_ID_RE.test(raw) || raw.includes("..")) {
    throw new HttpError(400, `training run id ${JSON.stringify(raw)} is invalid; expected characters from [A-Za-z0-9_.:-] without ".."`);
  }
  return raw;
}

/** Parses a tinker:// path whose model id is also a safe run id; InvalidArgumentError otherwise. */
export function checkTinkerPath(path: string): TinkerPath {
  const p = parseTinkerPath(path);
  if (!RUN_ID_RE.test(p.modelId) || p.modelId.includes("..")) {
    throw new InvalidArgumentError(`bad tinker path ${JSON.stringify(path)}: model id ${JSON.stringify(p.modelId)} must use [A-Za-z0-9_.:-] without ".."`);
  }
  return p;
}
