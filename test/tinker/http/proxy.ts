// A forwarding HTTP proxy on 127.0.0.1 for the client's fault and compatibility tests. It passes
// each request to an upstream Tinker server and records the exchange byte for byte, or, when the
// test's fault plan says so, answers in the server's place (429, 503), swallows the request and
// never answers (a hung server), cuts the connection while the body is still arriving (a reset
// mid-upload), or forwards the request and drops the server's answer (the work is done, the client
// never hears of it).
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Exchange {
  index: number;
  method: string;
  /** Path without the query. */
  path: string;
  /** The query string without "?" ("" when none). */
  query: string;
  requestHeaders: http.IncomingHttpHeaders;
  requestBody: Buffer;
  /** 0 when the client got no answer (hang, reset, lost answer). */
  status: number;
  responseHeaders: http.IncomingHttpHeaders;
  responseBody: Buffer;
  /** The fault injected on this exchange, if any. */
  fault?: Fault["kind"];
}

export type Fault =
  | { kind: "answer"; status: number; headers?: Record<string, string>; json?: unknown }
  | { kind: "hang" }
  | { kind: "reset_upload" }
  | { kind: "lose_answer" };

export interface ProxyRequest {
  /** 0-based count of requests seen so far. */
  index: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

export interface Proxy {
  url: string;
  exchanges: Exchange[];
  /** Where requests go from now on (a restarted server on another port). */
  setUpstream(url: string): void;
  close(): Promise<void>;
}

export async function startProxy(upstream: string, plan: (req: ProxyRequest) => Fault | undefined = () => undefined): Promise<Proxy> {
  let target = new URL(upstream);
  const exchanges: Exchange[] = [];
  const sockets = new Set<Socket>();
  let count = 0;

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://proxy");
    const ex: Exchange = {
      index: count++,
      method: req.method ?? "GET",
      path: u.pathname,
      query: u.search.replace(/^\?/, ""),
      requestHeaders: req.headers,
      requestBody: Buffer.alloc(0),
      status: 0,
      responseHeaders: {},
      responseBody: Buffer.alloc(0),
    };
    exchanges.push(ex);
    const fault = plan({ index: ex.index, method: ex.method, path: ex.path, headers: req.headers });
    if (fault !== undefined) ex.fault = fault.kind;
    const chunks: Buffer[] = [];
    if (fault?.kind === "reset_upload") {
      // Cut as soon as any of the body arrived (or at its end, for an empty body).
      const cut = (): void => {
        req.socket.destroy();
      };
      req.once("data", cut);
      req.once("end", cut);
      return;
    }
    // A client that gave up (its timeout) before the answer came got nothing: keep status 0.
    let clientGone = false;
    res.once("close", () => {
      if (!res.writableFinished) clientGone = true;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      ex.requestBody = Buffer.concat(chunks);
      if (fault?.kind === "hang") return;
      if (fault?.kind === "answer") {
        const body = fault.json === undefined ? "" : JSON.stringify(fault.json);
        ex.status = fault.status;
        ex.responseBody = Buffer.from(body);
        res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
        res.end(body);
        return;
      }
      forward(
        ex,
        req.headers,
        (status, headers, body) => {
          if (fault?.kind === "lose_answer") {
            req.socket.destroy();
            return;
          }
          if (clientGone) return;
          ex.status = status;
          ex.responseHeaders = headers;
          ex.responseBody = body;
          res.writeHead(status, headers);
          res.end(body);
        },
        () => req.socket.destroy(),
      );
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });

  function forward(
    ex: Exchange,
    headers: http.IncomingHttpHeaders,
    done: (status: number, headers: http.IncomingHttpHeaders, body: Buffer) => void,
    failed: () => void,
  ): void {
    const { host: _host, connection: _connection, ...rest } = headers;
    const up = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: ex.method,
        path: ex.path + (ex.query ? `?${ex.query}` : ""),
        headers: { ...rest, "content-length": String(ex.requestBody.length) },
        agent: false,
      },
      (upRes) => {
        const body: Buffer[] = [];
        upRes.on("data", (c: Buffer) => body.push(c));
        upRes.on("end", () => {
          const { connection: _c, "transfer-encoding": _te, "keep-alive": _ka, ...out } = upRes.headers;
          done(upRes.statusCode ?? 502, out, Buffer.concat(body));
        });
        upRes.on("error", failed);
      },
    );
    // An upstream that is down looks, to the client, like a server that is down.
    up.on("error", failed);
    up.end(ex.requestBody);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    setUpstream: (url) => {
      target = new URL(url);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
