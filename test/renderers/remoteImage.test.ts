// A supervised datum with an image, built by a VL renderer, goes through the remote HTTP client
// (JSON and protobuf forward_backward) to a fake server that checks the chunk layout and counts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getRenderer, type Message } from "../../src/renderers/index.ts";
import { conversationToDatum } from "../../src/supervised/common.ts";
import { HttpServiceClient } from "../../src/tinker/http/serviceClient.ts";
import { decodeForwardBackwardRequest } from "../../src/tinker/http/proto/messages.ts";
import type { Datum, ModelInputChunk } from "../../src/tinker/types.ts";
import { FakeClock, MemoryLogger, startFakeServer, type RecordedRequest, type Reply } from "../tinker/http/fakeServer.ts";
import { FakeTinker } from "../tinker/http/fakeTinker.ts";
import { packagedTokenizer } from "./helpers.ts";
import { pngBytes, pngDataUri } from "./imageFixtures.ts";

const convo: Message[] = [
  {
    role: "user",
    content: [
      { type: "image", image: pngDataUri(400, 300) },
      { type: "text", text: "Describe the image." },
    ],
  },
  { role: "assistant", content: "A flat grey rectangle." },
];

/** What the server checks: text, one 108-token PNG (400x300 for Qwen), text; targets span every position. */
function checkDatum(chunks: ModelInputChunk[], targets: number, weights: number): string | null {
  const kinds = chunks.map((c) => c.type).join(",");
  if (kinds !== "encoded_text,image,encoded_text") return `chunk layout ${kinds}`;
  const img = chunks[1]!;
  if (img.type !== "image") return "no image";
  if (img.format !== "png" || img.expected_tokens !== 108) return `image ${img.format} expected_tokens=${img.expected_tokens}`;
  if (!Buffer.from(img.data, "base64").equals(pngBytes(400, 300))) return "image bytes changed on the way";
  const n = chunks.reduce((s, c) => s + (c.type === "encoded_text" ? c.tokens.length : c.expected_tokens!), 0);
  if (targets !== n || weights !== n) return `targets ${targets} / weights ${weights} for ${n} positions`;
  return null;
}

async function sendThrough(proto: boolean, datum: Datum): Promise<string[]> {
  const fake = new FakeTinker();
  const verdicts: string[] = [];
  const server = await startFakeServer((req: RecordedRequest): Reply => {
    if (req.path === "/api/v1/forward_backward") {
      if (req.headers["content-type"] === "application/x-protobuf") {
        const decoded = decodeForwardBackwardRequest(new Uint8Array(req.body));
        const d = decoded.data[0]!;
        verdicts.push(checkDatum(d.model_input.chunks, d.loss_fn_inputs["target_tokens"]!.data.length, d.loss_fn_inputs["weights"]!.data.length) ?? "ok proto");
      } else {
        const body = req.json() as { forward_backward_input: { data: Datum[] } };
        const d = body.forward_backward_input.data[0]!;
        verdicts.push(checkDatum(d.model_input.chunks, d.loss_fn_inputs["target_tokens"]!.data.length, d.loss_fn_inputs["weights"]!.data.length) ?? "ok json");
      }
    }
    return fake.handler(req);
  });
  const client = new HttpServiceClient({
    baseUrl: server.url,
    apiKey: "tml-test",
    clock: new FakeClock(),
    logger: new MemoryLogger(),
    env: {},
    protoForwardBackward: proto,
  });
  try {
    const tc = await client.createLoraTrainingClient("Qwen/Qwen3.5-4B", { rank: 8 });
    await (await tc.forwardBackward([datum], "cross_entropy")).result();
  } finally {
    await client.close();
    await server.close();
  }
  return verdicts;
}

for (const proto of [false, true]) {
  test(`an image datum from qwen3_5 reaches the server whole (${proto ? "protobuf" : "JSON"} forward_backward)`, async () => {
    const r = getRenderer("qwen3_5", packagedTokenizer("qwen3"));
    const datum = conversationToDatum(convo, r, 4096);
    assert.deepEqual(await sendThrough(proto, datum), [proto ? "ok proto" : "ok json"]);
  });
}
