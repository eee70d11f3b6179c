// tinker:// checkpoint paths (docs/protocol.md#identifiers-ordering-and-tinker-paths): `tinker://<model_id>/weights/<name>` for training state
// and `tinker://<model_id>/sampler_weights/<name>` for sampler weights. SkyRL tx answers a named
// sampler save with the short form `tinker://<model_id>/<name>` (and accepts both back), so the
// short form parses as sampler weights too. Callers keep the path string they were given; the
// parsed form only says what it points at.
import { InvalidArgumentError } from "./errors.ts";

export type CheckpointKind = "weights" | "sampler_weights";

export interface TinkerPath {
  modelId: string;
  kind: CheckpointKind;
  name: string;
  /** The two-segment id REST URLs use: `<kind>/<name>`. */
  checkpointId: string;
  /** "short" for SkyRL's `tinker://<model_id>/<name>` sampler path, else "full". */
  form: "full" | "short";
}

const PREFIX = "tinker://";
const NAME_RE = /^[a-zA-Z0-9_-]+$/;
const MAX_NAME = 255;

/** Checks a checkpoint name; returns it unchanged or throws a message that says what is allowed. */
export function validateCheckpointName(name: string): string {
  if (name.length === 0 || name.length > MAX_NAME || !NAME_RE.test(name)) {
    throw new InvalidArgumentError(`checkpoint name ${JSON.stringify(name)} is invalid; expected 1–${MAX_NAME} characters from [a-zA-Z0-9_-]`);
  }
  return name;
}

export function isTinkerPath(path: string): boolean {
  return path.startsWith(PREFIX);
}

export function parseTinkerPath(path: string): TinkerPath {
  const expected = `expected tinker://<model_id>/weights/<name>, tinker://<model_id>/sampler_weights/<name> or tinker://<model_id>/<name> (sampler weights)`;
  if (!path.startsWith(PREFIX)) {
    throw new InvalidArgumentError(`not a tinker path: ${JSON.stringify(path)}; ${expected}`);
  }
  const parts = path.slice(PREFIX.length).split("/");
  if (parts.length !== 2 && parts.length !== 3) {
    throw new InvalidArgumentError(`bad tinker path ${JSON.stringify(path)}: has ${parts.length} segments after tinker://; ${expected}`);
  }
  const modelId = parts[0]!;
  if (modelId.length === 0) throw new InvalidArgumentError(`bad tinker path ${JSON.stringify(path)}: empty model id; ${expected}`);
  const kind = parts.length === 3 ? parts[1]! : "sampler_weights";
  const name = parts[parts.length - 1]!;
  if (kind !== "weights" && kind !== "sampler_weights") {
    throw new InvalidArgumentError(`bad tinker path ${JSON.stringify(path)}: middle segment is ${JSON.stringify(kind)}; ${expected}`);
  }
  try {
    validateCheckpointName(name);
  } catch (err) {
    throw new InvalidArgumentError(`bad tinker path ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
  return { modelId, kind, name, checkpointId: `${kind}/${name}`, form: parts.length === 3 ? "full" : "short" };
}

export function formatTinkerPath(p: { modelId: string; kind: CheckpointKind; name: string }): string {
  if (p.modelId.length === 0 || p.modelId.includes("/")) {
    throw new InvalidArgumentError(`model id ${JSON.stringify(p.modelId)} is invalid; expected a non-empty id without "/"`);
  }
  validateCheckpointName(p.name);
  return `${PREFIX}${p.modelId}/${p.kind}/${p.name}`;
}
