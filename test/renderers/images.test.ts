// Image parts: vision-token counts per family (the cookbook's image token counting), image
// chunks in each VL family's framing, loss weights, datums that keep images whole, and refusals.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { decodeImage, getRenderer, kimiVisionTokenCount, qwenVisionTokenCount, type Message } from "../../src/renderers/index.ts";
import { datumFromModelInputWeights } from "../../src/supervised/common.ts";
import type { ModelInputChunk } from "../../src/tinker/types.ts";
import { packagedTokenizer } from "./helpers.ts";
import { jpegHeaderBytes, pngBytes, pngDataUri } from "./imageFixtures.ts";
import { kimiK25Tokenizer } from "./setups.ts";

test("Qwen3-VL token counts match the cookbook's regression cases (smart resize, min 65,536 pixels)", () => {
  // (width, height, tokens) from the cookbook's image_token_count_test.
  for (const [w, h, n] of [
    [224, 224, 64],
    [150, 224, 70],
    [224, 150, 70],
    [400, 300, 108],
  ] as const) {
    assert.equal(qwenVisionTokenCount(w, h), n, `${w}x${h}`);
  }
  // Large images are scaled down to at most 16,777,216 pixels: (4096/32)^2 merged patches.
  assert.equal(qwenVisionTokenCount(8000, 8000), 16384);
  assert.throws(() => qwenVisionTokenCount(10000, 10), /aspect ratio/);
});

test("Kimi K2.5 token counts: NaViT resize, never upscaled, padded to 28-pixel tiles", () => {
  assert.equal(kimiVisionTokenCount(28, 28), 1);
  assert.equal(kimiVisionTokenCount(1000, 500), 36 * 18);
  assert.equal(kimiVisionTokenCount(10, 10), 1);
  // 16,384 patches at most: 4000x4000 has 285² patches, so it is scaled by sqrt(16384/285²) to
  // 1796 pixels a side, padded to 65 tiles of 28.
  assert.equal(kimiVisionTokenCount(4000, 4000), 65 * 65);
});

test("decodeImage reads PNG and JPEG sizes from data URIs, files and file:// URLs; refuses the rest", () => {
  assert.deepEqual((({ format, width, height }) => ({ format, width, height }))(decodeImage(pngDataUri(300, 200))), { format: "png", width: 300, height: 200 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "img-"));
  const jpg = path.join(dir, "a.jpg");
  fs.writeFileSync(jpg, jpegHeaderBytes(640, 480));
  for (const src of [jpg, "file://" + jpg]) {
    const d = decodeImage(src);
    assert.deepEqual([d.format, d.width, d.height], ["jpeg", 640, 480]);
  }
  assert.throws(() => decodeImage("https://example.com/cat.png"), /remote URLs are not fetched/);
  assert.throws(() => decodeImage("data:image/gif;base64," + Buffer.from("GIF89a").toString("base64")), /not a PNG or JPEG/);
  assert.throws(() => decodeImage(path.join(dir, "missing.png")), /cannot read .*missing\.png/);
});

const IMAGE = pngDataUri(224, 224); // 64 Qwen tokens

function imageConvo(image = IMAGE): Message[] {
  return [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image", image },
        { type: "text", text: "Be brief." },
      ],
    },
    { role: "assistant", content: "A grey square." },
  ];
}

function textOf(r: ReturnType<typeof getRenderer>, c: ModelInputChunk | undefined): string {
  assert.ok(c !== undefined && c.type === "encoded_text", "expected a text chunk");
  return r.tokenizer.decode(c.tokens);
}

for (const name of ["qwen3_vl", "qwen3_vl_instruct", "qwen3_5", "qwen3_8_xhigh_reasoning"]) {
  test(`${name}: an image renders as <|vision_start|>[image chunk, 64 tokens]<|vision_end|> and carries no loss`, () => {
    const r = getRenderer(name, packagedTokenizer("qwen3"));
    const prompt = r.buildGenerationPrompt(imageConvo().slice(0, 1));
    const i = prompt.chunks.findIndex((c) => c.type === "image");
    assert.ok(i > 0, "the prompt has an image chunk");
    const img = prompt.chunks[i]!;
    assert.ok(img.type === "image");
    assert.equal(img.format, "png");
    assert.equal(img.expected_tokens, 64);
    assert.deepEqual(Buffer.from(img.data, "base64"), pngBytes(224, 224));
    assert.ok(textOf(r, prompt.chunks[i - 1]).endsWith("What is in this picture?<|vision_start|>"));
    assert.ok(textOf(r, prompt.chunks[i + 1]).startsWith("<|vision_end|>Be brief.<|im_end|>"));

    const { modelInput, weights } = r.buildSupervisedExample(imageConvo());
    const n = modelInput.chunks.reduce((s, c) => s + (c.type === "encoded_text" ? c.tokens.length : c.expected_tokens!), 0);
    assert.equal(weights.length, n, "one weight per position, image positions included");
    let pos = 0;
    for (const c of modelInput.chunks) {
      const len = c.type === "encoded_text" ? c.tokens.length : c.expected_tokens!;
      if (c.type === "image")
        assert.ok(
          Array.from(weights.slice(pos, pos + len)).every((w) => w === 0),
          "image positions weigh 0",
        );
      pos += len;
    }
    assert.ok(Array.from(weights).some((w) => w > 0));
  });
}

test("kimi_k25: an image renders as <|media_begin|>image<|media_content|>[image]<|media_end|>⏎ with the K2.5 count", () => {
  const r = getRenderer("kimi_k25", kimiK25Tokenizer());
  const image = pngDataUri(1000, 500);
  const prompt = r.buildGenerationPrompt(imageConvo(image).slice(0, 1));
  const i = prompt.chunks.findIndex((c) => c.type === "image");
  const img = prompt.chunks[i]!;
  assert.ok(img.type === "image" && img.expected_tokens === 36 * 18);
  assert.ok(textOf(r, prompt.chunks[i - 1]).endsWith("What is in this picture?<|media_begin|>image<|media_content|>"));
  assert.ok(textOf(r, prompt.chunks[i + 1]).startsWith("<|media_end|>\nBe brief.<|im_end|>"));
  const last = prompt.chunks[prompt.chunks.length - 1]!;
  assert.ok(textOf(r, last).endsWith("<|im_assistant|>assistant<|im_middle|><think>"));
});

test("renderers without a vision format refuse image parts by name", () => {
  for (const [name, tok] of [
    ["qwen3", packagedTokenizer("qwen3")],
    ["nemotron3", packagedTokenizer("qwen3")],
    ["llama3", packagedTokenizer("llama3_1")],
  ] as const) {
    const r = getRenderer(name, tok);
    assert.throws(
      () => r.buildGenerationPrompt(imageConvo()),
      new RegExp(`message 0 \\(role user\\) has an image part, but renderer ${name} renders text only`),
    );
  }
});

test("a datum truncated inside an image drops the image whole, never a part of it", () => {
  const r = getRenderer("qwen3_5", packagedTokenizer("qwen3"));
  const { modelInput, weights } = r.buildSupervisedExample(imageConvo());
  const i = modelInput.chunks.findIndex((c) => c.type === "image");
  const before = modelInput.chunks.slice(0, i).reduce((s, c) => s + (c.type === "encoded_text" ? c.tokens.length : 0), 0);
  // Cut 10 positions into the image.
  const datum = datumFromModelInputWeights(modelInput, weights, before + 10);
  assert.ok(
    datum.model_input.chunks.every((c) => c.type === "encoded_text"),
    "the image is dropped whole",
  );
  assert.equal(datum.loss_fn_inputs["target_tokens"]!.data.length, before - 1);
  // With room for all of it, the image stays and targets cover its 64 positions.
  const full = datumFromModelInputWeights(modelInput, weights, null);
  assert.equal(full.model_input.chunks.filter((c) => c.type === "image").length, 1);
  assert.equal(full.loss_fn_inputs["target_tokens"]!.data.length, weights.length - 1);
});

test("the embedded engine refuses an image datum and names what to do instead", async () => {
  const { datumToSequenceInput } = await import("../../src/engine/convert.ts");
  const r = getRenderer("qwen3_5", packagedTokenizer("qwen3"));
  const { modelInput, weights } = r.buildSupervisedExample(imageConvo());
  const datum = datumFromModelInputWeights(modelInput, weights, null);
  assert.throws(() => datumToSequenceInput(datum, 0), /datum 0: .*chunk 1 is of type "image".*no vision tower.*remote Tinker service/);
});
