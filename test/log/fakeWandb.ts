// A stand-in for the W&B API on 127.0.0.1: answers the two GraphQL calls @wandb/sdk makes (viewer,
// upsertBucket) and its file_stream posts, and records every request so tests can read what the
// SDK sent. `refuseRun` answers upsertBucket with HTTP 403, as a project without write access does.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  url: string;
  authorization?: string;
  body: Record<string, unknown>;
}

export interface FakeWandb {
  url: string;
  requests: RecordedRequest[];
  /** upsertBucket variables of every run created. */
  runs(): Array<Record<string, unknown>>;
  /** The history rows the file_stream received, parsed, in order. */
  history(): Array<Record<string, unknown>>;
  /** Whether a file_stream post said the run is complete, and with which exit code. */
  completed(): { exitcode: unknown } | undefined;
  close(): Promise<void>;
}

export async function startFakeWandb(options: { refuseRun?: boolean } = {}): Promise<FakeWandb> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
      requests.push({ url: req.url ?? "", authorization: req.headers.authorization, body });
      res.setHeader("content-type", "application/json");
      const query = typeof body["query"] === "string" ? body["query"] : "";
      if (req.url === "/graphql" && query.includes("viewer")) {
        res.end(JSON.stringify({ data: { viewer: { id: "u1", entity: "fake-entity", flags: "", teams: { edges: [] } } } }));
      } else if (req.url === "/graphql" && query.includes("upsertBucket")) {
        if (options.refuseRun === true) {
          res.statusCode = 403;
          res.end(JSON.stringify({ errors: [{ message: "permission denied for project" }] }));
          return;
        }
        const v = body["variables"] as Record<string, unknown>;
        const bucket = {
          id: "b1",
          name: v["name"],
          displayName: v["displayName"],
          description: null,
          config: v["config"],
          sweepName: null,
          project: { id: "p1", name: v["project"], entity: { id: "e1", name: "fake-entity" } },
        };
        res.end(JSON.stringify({ data: { upsertBucket: { bucket, inserted: true } } }));
      } else if (req.url?.endsWith("/file_stream") === true) {
        res.end(JSON.stringify({ exitcode: null, limits: {} }));
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const streams = (): Array<Record<string, unknown>> => requests.filter((r) => r.url.endsWith("/file_stream")).map((r) => r.body);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    runs: () =>
      requests
        .filter((r) => r.url === "/graphql" && String(r.body["query"]).includes("upsertBucket"))
        .map((r) => r.body["variables"] as Record<string, unknown>),
    history: () =>
      streams().flatMap((b) => {
        const files = b["files"] as Record<string, { content: string[] }> | undefined;
        return (files?.["wandb-history.jsonl"]?.content ?? []).map((line) => JSON.parse(line) as Record<string, unknown>);
      }),
    completed: () => {
      const done = streams().find((b) => b["complete"] === true);
      return done === undefined ? undefined : { exitcode: done["exitcode"] };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
