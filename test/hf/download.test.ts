// Hub downloads survive what the network and the hub do: a connection reset (a pooled keep-alive
// socket the server had just closed) and a 503 are tried again; a 404 is an answer, not retried.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { downloadHubFile, HubHttpError } from "../../src/hf/download.ts";

test("a reset connection and a 503 are retried; a 404 is not", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-download-"));
  let calls = 0;
  const server = createServer((req, res) => {
    calls++;
    if (req.url === "/missing") return void res.writeHead(404).end();
    if (calls === 1) return void req.socket.destroy();
    if (calls === 2) return void res.writeHead(503).end("busy");
    res.writeHead(200, { "content-length": "5" }).end("hello");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await downloadHubFile(`${url}/file`, join(dir, "file"));
    assert.equal(readFileSync(join(dir, "file"), "utf8"), "hello");
    assert.equal(calls, 3, "reset, 503, then the file");
    calls = 0;
    await assert.rejects(downloadHubFile(`${url}/missing`, join(dir, "missing")), (err: unknown) => err instanceof HubHttpError && err.status === 404);
    assert.equal(calls, 1, "a 404 is asked once");
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a repository the hub does not have is reported as its 404, not as an incomplete download", async () => {
  const { startFakeHub } = await import("../hub/fakeHub.ts");
  const { downloadToCache } = await import("../../src/hf/models.ts");
  const hub = await startFakeHub({});
  const home = mkdtempSync(join(tmpdir(), "hub-missing-"));
  try {
    for (const need of ["tokenizer", "model"] as const) {
      await assert.rejects(downloadToCache("acme/none", need, { HF_ENDPOINT: hub.url, HF_HOME: home }, { log: () => undefined }), (err: unknown) => {
        assert.ok(err instanceof HubHttpError && err.status === 404, String(err));
        assert.match((err as Error).message, /acme\/none\/resolve\/main\/config\.json/);
        return true;
      });
    }
  } finally {
    await hub.close();
    rmSync(home, { recursive: true, force: true });
  }
});
