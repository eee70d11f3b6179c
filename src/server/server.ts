// `cookbook serve`: the embedded engine behind the Tinker HTTP protocol, for SDK clients (JSON era
// and 0.18–0.24 protobuf), our own HTTP client, and recipes pointed at it with base_url.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createEmbeddedServiceClient } from "../engine/index.ts";
import { ConfigurationError } from "../tinker/errors.ts";
import { apiKeyChecker, isLoopbackHost } from "./auth.ts";
import { ServerCore, type Call, type Reply } from "./core.ts";
import { toHttpError, zodDetail } from "./errors.ts";
import { HttpError, readBody, sendBytes, sendJson, sendStream } from "./http.ts";
import { ServeOptionsSchema, type ServeHooks, type ServeOptions } from "./options.ts";
import { route } from "./router.ts";

export interface RunningServer {
  /** e.g. http://127.0.0.1:8000 (the base_url clients use). */
  url: string;
  host: string;
  port: number;
  core: ServerCore;
  close(): Promise<void>;
}

const HEALTHZ = "/api/v1/healthz";
const ARCHIVE_DOWNLOAD = "/api/v1/checkpoint_archives/";
const OPENAI = "/v1/";

function bearerToken(header: string | undefined): string | undefined {
  const m = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header);
  return m === null ? undefined : m[1]!.trim();
}

/** OpenAI clients read `{error: {message, type, param, code}}`; handlers may have built one already. */
function openAIErrorBody(e: HttpError): unknown {
  if (typeof e.detail === "object" && e.detail !== null && "error" in e.detail) return e.detail;
  const message = typeof e.detail === "string" ? e.detail : JSON.stringify(e.detail);
  const type = e.status === 401 ? "authentication_error" : e.status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: null } };
}

export async function startServer(options: ServeOptions = {}, hooks: ServeHooks = {}): Promise<RunningServer> {
  const parsed = ServeOptionsSchema.strict().safeParse(options);
  if (!parsed.success) throw new ConfigurationError(`serve options: ${zodDetail(parsed.error)}`);
  const o = parsed.data;
  if (!isLoopbackHost(o.host) && o.apiKey === undefined) {
    throw new ConfigurationError(
      `binding ${o.host} exposes the engine beyond this machine; pass --api-key (or set COOKBOOK_SERVE_API_KEY) so clients must present X-API-Key, or bind 127.0.0.1`,
    );
  }
  const log = hooks.log ?? ((line: string) => process.stderr.write(`[serve] ${line}\n`));
  const service = createEmbeddedServiceClient({ storeDir: o.storeDir, kernels: o.kernels, resolve: hooks.resolve });
  const core = new ServerCore(service, o, log, hooks);
  const authorized = apiKeyChecker(o.apiKey);
  const inflight = new Set<AbortController>();

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const abort = new AbortController();
    inflight.add(abort);
    res.on("close", () => {
      abort.abort();
      inflight.delete(abort);
    });
    const method = req.method ?? "GET";
    let pathname = "?";
    try {
      const url = new URL(req.url ?? "/", "http://server");
      pathname = url.pathname;
      // Signed archive URLs carry their own authorisation (src/server/archives.ts).
      // OpenAI clients present the key as a bearer token.
      const presented = req.headers["x-api-key"] ?? bearerToken(req.headers.authorization);
      if (pathname !== HEALTHZ && !pathname.startsWith(ARCHIVE_DOWNLOAD) && !authorized(presented)) {
        req.resume();
        throw new HttpError(401, "missing or invalid X-API-Key (or Authorization: Bearer)");
      }
      const { handler, params } = route(method, pathname);
      const encoding = String(req.headers["content-encoding"] ?? "identity").toLowerCase();
      if (encoding !== "identity") {
        req.resume();
        throw new HttpError(415, `Content-Encoding ${JSON.stringify(encoding)} is not supported; send the body uncompressed`);
      }
      const body = method === "GET" ? Buffer.alloc(0) : await readBody(req, o.maxBodyBytes);
      const call: Call = { req, res, url, params, body, signal: abort.signal };
      const reply: Reply = await handler(core, call);
      if ("bytes" in reply) sendBytes(res, reply.status ?? 200, reply.bytes, reply.contentType);
      else if ("stream" in reply) sendStream(res, reply.status ?? 200, reply.stream, reply.contentType, reply.headers);
      else sendJson(res, reply.status ?? 200, reply.json ?? {}, reply.headers);
    } catch (err) {
      const e = toHttpError(err);
      if (e.status >= 500) log(`${method} ${pathname} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      const body = pathname.startsWith(OPENAI) ? openAIErrorBody(e) : typeof e.detail === "object" && e.detail !== null ? e.detail : { detail: e.detail };
      sendJson(res, e.status, body, e.headers);
    }
  };

  const server = http.createServer((req, res) => void handle(req, res));
  // Long polls hold a request open for up to longPollSec; keep idle sockets a little longer.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;

  const sessionTick = Math.max(50, Math.min((o.sessionTimeoutSec * 1000) / 4, 30_000));
  const sessionTimer = setInterval(() => core.registry.expireSessions(), sessionTick);
  const sweepTimer = setInterval(() => core.futures.sweep(), Math.max(50, Math.min(o.deliveredRetentionSec * 1000, 10_000)));
  sessionTimer.unref();
  sweepTimer.unref();

  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl}:${addr.port}`,
    host: addr.address,
    port: addr.port,
    core,
    close() {
      closing ??= (async () => {
        clearInterval(sessionTimer);
        clearInterval(sweepTimer);
        for (const a of inflight) a.abort();
        core.futures.wakeAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await service.close();
      })();
      return closing;
    },
  };
}
