// Replays every request body the official Python SDK 0.16.1 sent (captured on the wire, one JSON
// object per line: method, path, query, body) against `cookbook serve` on localhost, in order.
// The recording's ids (sessions, models, samplers, request ids) are replaced by the ones this
// server handed out: a recorded id seen for the first time stands for the newest id of its kind
// that this server produced and no recorded id claimed yet.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../src/server/index.ts";
import { tempDir } from "../engine/helpers.ts";

interface Recorded {
  method: string;
  path: string;
  query: string;
  body: unknown;
}

const RECORDING = join(import.meta.dirname, "fixtures", "sdk0161Requests.jsonl");
const ID_RE = /\b(session|local|sampler|req)-[0-9a-f]{8,16}\b/g;

/**
 * Requests in the recording that probe error paths on purpose, and what the error must mention:
 * they must fail as the caller's fault (category "user", or a 4xx when answered at once). The
 * last forward sends cross_entropy targets without `weights`, which this engine requires.
 */
function expectedUserError(r: Recorded | undefined): RegExp | undefined {
  if (r === undefined) return undefined;
  const text = JSON.stringify(r.body);
  if (text.includes("no-such/model-xyz")) return /no-such\/model-xyz/;
  if (text.includes("tinker://nope/")) return /nope/;
  const input = (r.body as { forward_input?: { loss_fn: string; data: { loss_fn_inputs: object }[] } } | null)?.forward_input;
  if (input?.loss_fn === "cross_entropy" && input.data.some((d) => !("weights" in d.loss_fn_inputs))) return /"weights"/;
  return undefined;
}

let dir: { dir: string; cleanup: () => void };
let server: RunningServer;

before(async () => {
  dir = tempDir("sdk-replay-");
  server = await startServer(
    { port: 0, storeDir: join(dir.dir, "store"), kernels: "reference" },
    // The recording names the shipped model "tiny-chat"; offline so unknown names fail at once.
    { resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(dir.dir, "hf"), COOKBOOK_HOME: dir.dir } }, log: () => undefined },
  );
});

after(async () => {
  await server.close();
  dir.cleanup();
});

class IdMap {
  private readonly mapped = new Map<string, string>();
  private readonly produced = new Map<string, string[]>();
  private readonly claimed = new Set<string>();

  /** Notes every id this server put in an answer. */
  observe(value: unknown): void {
    const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
    for (const m of text.matchAll(ID_RE)) {
      const list = this.produced.get(m[1]!) ?? [];
      if (!list.includes(m[0])) list.push(m[0]);
      this.produced.set(m[1]!, list);
    }
  }

  /** The recorded text with every recorded id replaced by this server's. */
  translate(text: string, line: number): string {
    return text.replace(ID_RE, (id, kind: string) => {
      let ours = this.mapped.get(id);
      if (ours === undefined) {
        const candidates = (this.produced.get(kind) ?? []).filter((c) => !this.claimed.has(c));
        ours = candidates[candidates.length - 1];
        assert.ok(ours !== undefined, `line ${line}: recorded id ${id} has no counterpart among the ids this server produced`);
        this.mapped.set(id, ours);
        this.claimed.add(ours);
      }
      return ours;
    });
  }
}

test("every request body SDK 0.16.1 sent is accepted (2xx) by cookbook serve, in order", async () => {
  const lines = readFileSync(RECORDING, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  assert.ok(lines.length >= 100, `the recording has ${lines.length} requests`);
  const ids = new IdMap();
  const seenOps = new Set<string>();
  let userErrors = 0;
  let archiveChecked = false;
  for (const [i, line] of lines.entries()) {
    const lineNo = i + 1;
    const rec = JSON.parse(ids.translate(line, lineNo)) as Recorded;
    const url = `${server.url}${rec.path}${rec.query ? `?${rec.query}` : ""}`;
    const send = (): Promise<Response> =>
      fetch(url, {
        method: rec.method,
        headers: rec.body === null ? { accept: "application/json" } : { "content-type": "application/json", accept: "application/json" },
        body: rec.body === null ? undefined : JSON.stringify(rec.body),
        redirect: "manual",
      });
    let res = await send();
    // A long poll that ends before the work does answers 408 "poll again", and the SDK polls
    // again: on a loaded machine the recorded single poll may need several.
    for (let polls = 0; rec.path === "/api/v1/retrieve_future" && res.status === 408 && polls < 60; polls++) {
      await res.text();
      res = await send();
    }
    const text = await res.text();
    const where = `line ${lineNo}: ${rec.method} ${rec.path} → ${res.status} ${text.slice(0, 400)}`;
    const json = text.length > 0 && (res.headers.get("content-type") ?? "").includes("json") ? (JSON.parse(text) as Record<string, unknown>) : {};
    ids.observe(json);
    seenOps.add(`${rec.method} ${rec.path.replace(ID_RE, "{id}").replace(/checkpoints\/.+$/, "checkpoints/{ckpt}")}`);
    const previous = i > 0 ? (JSON.parse(lines[i - 1]!) as Recorded) : undefined;
    const fault = expectedUserError(rec) ?? (rec.path === "/api/v1/retrieve_future" ? expectedUserError(previous) : undefined);
    if (fault !== undefined) {
      userErrors++;
      // A synchronous endpoint answers 4xx; a future answers 2xx and then fails with category "user".
      if (res.status >= 400) {
        assert.ok(res.status < 500, where);
        assert.match(text, fault, where);
      } else if (rec.path === "/api/v1/retrieve_future") {
        assert.equal(json["category"], "user", where);
        assert.match(String(json["error"]), fault, where);
      } else assert.ok(res.status < 300, where);
      continue;
    }
    assert.ok(res.status >= 200 && res.status < 300, where);
    if (rec.path === "/api/v1/retrieve_future") assert.equal(json["error"], undefined, where);
    if (rec.path.endsWith("/archive")) {
      // The signed URL serves a tar of the checkpoint folder (ustar magic at byte 257).
      const tar = new Uint8Array(await (await fetch(String(json["url"]))).arrayBuffer());
      assert.equal(new TextDecoder().decode(tar.subarray(257, 262)), "ustar", where);
      assert.ok(new TextDecoder().decode(tar).includes("adapter_model.safetensors"), where);
      archiveChecked = true;
    }
  }
  assert.ok(userErrors >= 8, `the recording's error probes were replayed (${userErrors})`);
  assert.equal(seenOps.size, 23, `distinct operations replayed: ${[...seenOps].join(", ")}`);
  assert.ok(archiveChecked, "the archive URL was fetched");
});
