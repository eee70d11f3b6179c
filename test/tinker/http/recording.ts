// Recorded HTTP exchanges between our client and a real Tinker-compatible server, kept as
// fixtures (one exchange per JSONL line) so CI can replay the server's actual answers to our
// client without the server. Written from the proxy's exchanges (proxy.ts); replayed by a fake
// server that answers each request with the recorded answer to the same request.
import { readFileSync } from "node:fs";
import type { Exchange } from "./proxy.ts";
import type { RecordedRequest, Reply } from "./fakeServer.ts";

/** One exchange as stored: JSON bodies as JSON, anything else as base64. */
export interface RecordedExchange {
  method: string;
  path: string;
  query: string;
  request?: unknown;
  request_b64?: string;
  request_type?: string;
  status: number;
  response?: unknown;
  response_b64?: string;
  response_type?: string;
}

function isJson(type: string | undefined, body: Buffer): boolean {
  if (body.length === 0 || !(type ?? "").includes("json")) return false;
  try {
    JSON.parse(body.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

function header(h: Exchange["requestHeaders"], key: string): string | undefined {
  const v = h[key];
  return Array.isArray(v) ? v[0] : v;
}

/** The exchanges the client got an answer to, without headers (no keys are ever stored). */
export function toRecorded(exchanges: Exchange[]): RecordedExchange[] {
  return exchanges
    .filter((e) => e.status > 0)
    .map((e) => {
      const reqType = header(e.requestHeaders, "content-type");
      const resType = header(e.responseHeaders, "content-type");
      const r: RecordedExchange = { method: e.method, path: e.path, query: e.query, status: e.status };
      if (e.requestBody.length > 0) {
        if (reqType !== undefined) r.request_type = reqType;
        if (isJson(reqType, e.requestBody)) r.request = JSON.parse(e.requestBody.toString("utf8"));
        else r.request_b64 = e.requestBody.toString("base64");
      }
      if (resType !== undefined) r.response_type = resType;
      if (isJson(resType, e.responseBody)) r.response = JSON.parse(e.responseBody.toString("utf8"));
      else if (e.responseBody.length > 0) r.response_b64 = e.responseBody.toString("base64");
      return r;
    });
}

export function readRecording(file: string): RecordedExchange[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      try {
        return JSON.parse(l) as RecordedExchange;
      } catch (err) {
        throw new Error(`${file}:${i + 1}: not a JSON exchange (${(err as Error).message})`);
      }
    });
}

function requestKey(r: { request?: unknown; request_b64?: string }): string {
  return r.request !== undefined ? JSON.stringify(r.request) : (r.request_b64 ?? "");
}

/** Paths whose count depends on timing (heartbeats), answered with any recorded answer. */
const TIMING_PATHS = new Set(["/api/v1/session_heartbeat", "/api/v1/telemetry"]);

export interface Replayer {
  answer(req: RecordedRequest): Reply;
  /** Requests that had no recorded answer (answered with 599). */
  unanswered: string[];
  /** Requests answered by the next recorded exchange of their path although their body differed. */
  bodyMismatches: string[];
  /** Recorded exchanges never asked for. */
  unused(): RecordedExchange[];
}

/**
 * Answers each request with the recorded answer to the same request: retrieve_future by its
 * request_id (its recorded answers in order, the last one repeated), other paths by an equal body
 * first, else the next unused exchange of the path. `rewrite` maps recorded text to this
 * machine's (a model folder recorded on another machine).
 */
export function replayer(recorded: RecordedExchange[], rewrite: (text: string) => string = (t) => t): Replayer {
  const rewritten = recorded.map((r) => JSON.parse(rewrite(JSON.stringify(r))) as RecordedExchange);
  const used = new Set<RecordedExchange>();
  const futures = new Map<string, RecordedExchange[]>();
  for (const r of rewritten) {
    if (r.path !== "/api/v1/retrieve_future") continue;
    const id = (r.request as { request_id?: string } | undefined)?.request_id ?? "";
    futures.set(id, [...(futures.get(id) ?? []), r]);
  }
  const unanswered: string[] = [];
  const bodyMismatches: string[] = [];

  const reply = (r: RecordedExchange): Reply => {
    used.add(r);
    const body = r.response !== undefined ? JSON.stringify(r.response) : Buffer.from(r.response_b64 ?? "", "base64");
    return { status: r.status, body, headers: r.response_type !== undefined ? { "content-type": r.response_type } : {} };
  };

  return {
    unanswered,
    bodyMismatches,
    unused: () => rewritten.filter((r) => !used.has(r) && !TIMING_PATHS.has(r.path)),
    answer(req) {
      const query = req.query.toString();
      const isJsonBody = (req.headers["content-type"] ?? "").includes("json") && req.body.length > 0;
      const asRecorded = {
        request: isJsonBody ? (JSON.parse(req.body.toString("utf8")) as unknown) : undefined,
        request_b64: isJsonBody || req.body.length === 0 ? undefined : req.body.toString("base64"),
      };
      const what = `${req.method} ${req.path}${query ? `?${query}` : ""}`;
      if (req.path === "/api/v1/retrieve_future") {
        const id = (asRecorded.request as { request_id?: string } | undefined)?.request_id ?? "";
        const queue = futures.get(id);
        if (queue === undefined || queue.length === 0) {
          unanswered.push(`${what} ${id}`);
          return { status: 599, json: { detail: `replay: no recorded answer for request ${id}` } };
        }
        const next = queue.find((r) => !used.has(r)) ?? queue.at(-1)!;
        return reply(next);
      }
      const candidates = rewritten.filter((r) => r.method === req.method && r.path === req.path && r.query === query);
      if (TIMING_PATHS.has(req.path) && candidates.length > 0) return reply(candidates[0]!);
      const open = candidates.filter((r) => !used.has(r));
      const key = requestKey(asRecorded);
      const same = open.find((r) => requestKey(r) === key);
      if (same !== undefined) return reply(same);
      if (open.length === 0) {
        unanswered.push(what);
        return { status: 599, json: { detail: `replay: no recorded answer left for ${what}` } };
      }
      bodyMismatches.push(`${what}: ${key.slice(0, 300)}`);
      return reply(open[0]!);
    },
  };
}
