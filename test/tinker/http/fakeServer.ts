// Test helpers: a scripted HTTP server on 127.0.0.1 and a clock whose sleeps return at once.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Clock } from "../../../src/tinker/http/clock.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json(): Record<string, unknown>;
}

export type Reply = { status?: number; json?: unknown; body?: Uint8Array | string; headers?: Record<string, string> } | "drop";

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Every request is answered by `handler`; past `maxRequests` the server answers 403 so runaway loops end. */
export async function startFakeServer(handler: (req: RecordedRequest) => Reply | Promise<Reply>, maxRequests = 200): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const u = new URL(req.url ?? "/", "http://x");
      const body = Buffer.concat(chunks);
      const rec: RecordedRequest = {
        method: req.method ?? "GET",
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body,
        json: () => JSON.parse(body.toString("utf8")) as Record<string, unknown>,
      };
      requests.push(rec);
      const answer = async (): Promise<void> => {
        const reply: Reply = requests.length > maxRequests ? { status: 403, json: { detail: "fake server request budget exceeded" } } : await handler(rec);
        if (reply === "drop") {
          req.socket.destroy();
          return;
        }
        const headers: Record<string, string> = { ...reply.headers };
        let payload: Uint8Array | string = "";
        if (reply.json !== undefined) {
          payload = JSON.stringify(reply.json);
          headers["content-type"] ??= "application/json";
        } else if (reply.body !== undefined) payload = reply.body;
        res.writeHead(reply.status ?? 200, headers);
        res.end(payload);
      };
      answer().catch((err: unknown) => {
        res.writeHead(599);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Replies taken in order from a list per "METHOD /path"; unscripted requests get a 403. */
export function scripted(routes: Record<string, Reply[]>): (req: RecordedRequest) => Reply {
  return (req) => {
    const list = routes[`${req.method} ${req.path}`];
    const next = list?.shift();
    return next ?? { status: 403, json: { detail: `no scripted reply for ${req.method} ${req.path}` } };
  };
}

export class FakeClock implements Clock {
  t = 1_000_000;
  readonly sleeps: number[] = [];
  private timers: (() => void)[] = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += ms;
    return new Promise((resolve) => setImmediate(resolve));
  }

  every(_ms: number, fn: () => void): () => void {
    this.timers.push(fn);
    return () => {
      this.timers = this.timers.filter((f) => f !== fn);
    };
  }

  get timerCount(): number {
    return this.timers.length;
  }

  fire(): void {
    for (const f of this.timers) f();
  }
}

export class MemoryLogger {
  readonly lines: string[] = [];
  info(m: string): void {
    this.lines.push(`info: ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`warn: ${m}`);
  }
}

export function hex(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s.replace(/[^0-9a-f]/gi, ""), "hex"));
}
