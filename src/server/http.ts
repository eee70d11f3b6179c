// Small HTTP helpers of the server: bounded body reading, JSON and protobuf answers, and the
// error type handlers throw to answer with a status and the service's `{detail}` body (docs/protocol.md#errors).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Readable } from "node:stream";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
  }
}

/**
 * Reads the whole body, refusing more than `limit` bytes with 413. A body announced as too big is
 * refused before reading; one that grows too big is drained (not kept) so the client still gets
 * the answer instead of a reset connection.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooBig = (): HttpError => new HttpError(413, `request body exceeds the server's limit of ${limit} bytes`, { Connection: "close" });
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(tooBig());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      if (!over) chunks.push(c);
    });
    req.on("end", () => (over ? reject(tooBig()) : resolve(Buffer.concat(chunks))));
    req.on("error", (err) => reject(new HttpError(400, `could not read the request body: ${err.message}`)));
  });
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const body = status === 204 ? "" : JSON.stringify(value);
  res.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) });
  res.end(body);
}

export function sendBytes(res: ServerResponse, status: number, bytes: Uint8Array, contentType: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": String(bytes.length) });
  res.end(bytes);
}

export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw new HttpError(400, "request body is empty; expected a JSON object");
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch (err) {
    throw new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Streams `body`; an error half-way (a file vanished) cuts the connection so the client sees a truncated transfer, not a short success. */
export function sendStream(res: ServerResponse, status: number, body: Readable, contentType: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) {
    body.destroy();
    return;
  }
  res.writeHead(status, { ...headers, "Content-Type": contentType });
  body.on("error", (err: Error) => res.destroy(err));
  res.on("close", () => body.destroy());
  body.pipe(res);
}
