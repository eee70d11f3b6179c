// What a run needs from its server, checked before it trains: the base model served, the LoRA
// rank allowed, top-k prompt logprobs answered. Servers differ (the hosted service, SkyRL tx,
// `cookbook serve`), and a run that finds out at its first sampler save or its first teacher call
// has already spent its time; the refusals name the server, what it lacks and what to do instead.
// The embedded engine serves any model it can resolve and has every feature, so it is not asked.
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";
import { APIStatusError, RequestFailedError, UnsupportedByServerError } from "../tinker/errors.ts";
import { modelInputFromInts } from "../tinker/modelInput.ts";
import type { ServerCapabilities } from "../tinker/types.ts";

export function describeServer(service: Pick<ServiceClient, "engineKind" | "baseUrl">): string {
  if (service.engineKind === "embedded" || service.baseUrl === undefined) return "the embedded engine";
  const hosted = /(^|\.)thinkingmachines\.(dev|ai)$/.test(new URL(service.baseUrl).hostname);
  return `the server at ${service.baseUrl}${hosted ? " (the hosted Tinker service)" : ""}`;
}

/** The server's capabilities, or null when it has no such endpoint (nothing can be checked then). */
async function readCapabilities(service: ServiceClient): Promise<ServerCapabilities | null> {
  try {
    return await service.getServerCapabilities();
  } catch (err) {
    if (err instanceof APIStatusError && (err.status === 404 || err.status === 405)) return null;
    throw err;
  }
}

export interface ModelNeeds {
  /** The base model, and the config key it came from (named in the message). */
  model: string;
  field: string;
  loraRank?: number;
  recipe: string;
}

/** Refuses when the server lists models and `model` is not one of them, or the rank is above its advertised ceiling. */
export async function checkServerServes(service: ServiceClient, needs: ModelNeeds): Promise<void> {
  if (service.engineKind === "embedded") return;
  const caps = await readCapabilities(service);
  if (caps === null) return;
  const server = describeServer(service);
  const names = caps.supported_models.flatMap((m) => (m.model_name !== undefined ? [m.model_name] : []));
  // A folder path names files on the server's disk, which no list of model names can show.
  const isPath = needs.model.startsWith("/") || needs.model.startsWith("./");
  if (names.length > 0 && !names.includes(needs.model) && !isPath) {
    throw new UnsupportedByServerError(
      `${needs.recipe}: ${server} does not serve ${needs.field}=${needs.model}; it serves ${names.map((n) => JSON.stringify(n)).join(", ")}. ` +
        `Pick one of those (${needs.field}=${names[0]}), point base_url at a server that has ${needs.model}, or run on this machine with base_url=local (the embedded engine).`,
    );
  }
  if (needs.loraRank !== undefined && caps.max_lora_rank !== undefined && needs.loraRank > caps.max_lora_rank) {
    throw loraRankError(needs, server, `its maximum LoRA rank is ${caps.max_lora_rank}`, caps.max_lora_rank);
  }
}

function loraRankError(needs: ModelNeeds, server: string, why: string, max?: number): UnsupportedByServerError {
  return new UnsupportedByServerError(
    `${needs.recipe}: ${server} cannot train lora_rank=${needs.loraRank} on ${needs.model}: ${why}. ` +
      `Use a smaller rank (lora_rank=${max ?? "…"}), a server allowing rank ${needs.loraRank}, or base_url=local (the embedded engine has no ceiling).`,
  );
}

/**
 * create_model refused by the server for its LoRA rank (SkyRL tx: "LoRA rank 64 must be between
 * 1 and 32") becomes the same refusal as an advertised ceiling; anything else passes through.
 */
export function explainCreateModelFailure(err: unknown, service: ServiceClient, needs: ModelNeeds): unknown {
  const refused = (err instanceof APIStatusError && err.status >= 400 && err.status < 500) || err instanceof RequestFailedError;
  if (!refused || needs.loraRank === undefined) return err;
  const detail = serverDetail(err);
  if (!/\brank\b/i.test(detail)) return err;
  const max = /between 1 and (\d+)|maximum of (\d+)/i.exec(detail);
  const limit = max === null ? undefined : Number(max[1] ?? max[2]);
  return loraRankError(needs, describeServer(service), `it answered "${detail}"`, limit);
}

/** The server's own words: the `detail` of a JSON error body, else the message. */
function serverDetail(err: Error): string {
  if (err instanceof APIStatusError && typeof err.body === "object" && err.body !== null) {
    const detail = (err.body as Record<string, unknown>)["detail"];
    if (typeof detail === "string") return detail;
  }
  return err.message;
}

/**
 * Asks `sampler` for top-k prompt logprobs of a two-token prompt; refuses when the server says no
 * or answers without them. `alternatives` says what the recipe's user can do instead.
 */
export async function requireTopkPromptLogprobs(
  sampler: SamplingClient,
  k: number,
  who: { recipe: string; server: string; role: string; alternatives: string },
): Promise<void> {
  let answer: string | undefined;
  try {
    const res = await sampler.sample(modelInputFromInts([1, 2]), 1, { max_tokens: 1, temperature: 1 }, { includePromptLogprobs: true, topkPromptLogprobs: k });
    const last = res.topk_prompt_logprobs?.[1];
    if (last === undefined || last === null || last.length === 0) answer = "it answered without them";
  } catch (err) {
    if (!(err instanceof APIStatusError || err instanceof RequestFailedError)) throw err;
    answer = `it answered "${serverDetail(err)}"`;
  }
  if (answer === undefined) return;
  throw new UnsupportedByServerError(
    `${who.recipe}: ${who.server} does not give top-k prompt logprobs (k=${k}), needed for ${who.role}; ${answer}. ${who.alternatives}`,
  );
}
