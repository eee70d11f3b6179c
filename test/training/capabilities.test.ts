// The capability checks on fake servers: which server answers what, and the refusal messages.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { SamplingClient, ServiceClient } from "../../src/tinker/clients.ts";
import { APIStatusError, RequestFailedError, UnsupportedByServerError } from "../../src/tinker/errors.ts";
import type { SampleResponse, ServerCapabilities } from "../../src/tinker/types.ts";
import { checkServerServes, describeServer, explainCreateModelFailure, requireTopkPromptLogprobs } from "../../src/training/capabilities.ts";

function fakeService(
  caps: ServerCapabilities | Error,
  engineKind: "remote" | "embedded" = "remote",
  baseUrl = "http://gpu-box:8000",
): ServiceClient & { asked: number } {
  const svc = {
    engineKind,
    baseUrl: engineKind === "remote" ? baseUrl : undefined,
    asked: 0,
    async getServerCapabilities(): Promise<ServerCapabilities> {
      svc.asked++;
      if (caps instanceof Error) throw caps;
      return caps;
    },
  };
  return svc as unknown as ServiceClient & { asked: number };
}

const needs = { model: "Qwen/Qwen3-8B", field: "model_name", loraRank: 64, recipe: "sl_basic" };

test("describeServer names the embedded engine, a URL, and the hosted service", () => {
  assert.equal(describeServer({ engineKind: "embedded" }), "the embedded engine");
  assert.equal(describeServer({ engineKind: "remote", baseUrl: "http://gpu-box:8000" }), "the server at http://gpu-box:8000");
  assert.match(describeServer({ engineKind: "remote", baseUrl: "https://tinker.thinkingmachines.dev/services/tinker-prod" }), /\(the hosted Tinker service\)$/);
});

test("a model the server does not list is refused with the server, the model, what it serves and the alternatives", async () => {
  const svc = fakeService({ supported_models: [{ model_name: "/models/Qwen3-0.6B" }, { model_name: "meta-llama/Llama-3.2-1B" }] });
  await assert.rejects(checkServerServes(svc, needs), (err: Error) => {
    assert.ok(err instanceof UnsupportedByServerError);
    assert.match(
      err.message,
      /^sl_basic: the server at http:\/\/gpu-box:8000 does not serve model_name=Qwen\/Qwen3-8B; it serves "\/models\/Qwen3-0.6B", "meta-llama\/Llama-3.2-1B"\./,
    );
    assert.match(err.message, /model_name=\/models\/Qwen3-0.6B/);
    assert.match(err.message, /base_url=local/);
    return true;
  });
  // Listed → accepted; a folder path cannot be listed by name, so it is left to the server.
  await checkServerServes(svc, { ...needs, model: "meta-llama/Llama-3.2-1B" });
  await checkServerServes(svc, { ...needs, model: "/data/my-model" });
});

test("an advertised LoRA rank ceiling refuses a larger rank; none advertised, none checked", async () => {
  const capped = fakeService({ supported_models: [{ model_name: "Qwen/Qwen3-8B" }], max_lora_rank: 32 });
  await assert.rejects(
    checkServerServes(capped, needs),
    /sl_basic: the server at http:\/\/gpu-box:8000 cannot train lora_rank=64 on Qwen\/Qwen3-8B: its maximum LoRA rank is 32\. Use a smaller rank \(lora_rank=32\)/,
  );
  await checkServerServes(capped, { ...needs, loraRank: 32 });
  await checkServerServes(fakeService({ supported_models: [{ model_name: "Qwen/Qwen3-8B" }] }), needs);
});

test("the embedded engine is not asked; a server without the endpoint, or with an empty list, is not refused", async () => {
  const embedded = fakeService({ supported_models: [] }, "embedded");
  await checkServerServes(embedded, needs);
  assert.equal(embedded.asked, 0);
  await checkServerServes(fakeService(new APIStatusError("GET get_server_capabilities failed with HTTP 404", 404, { detail: "Not Found" })), needs);
  await checkServerServes(fakeService({ supported_models: [] }), needs);
  await assert.rejects(checkServerServes(fakeService(new APIStatusError("boom", 500, "")), needs), /boom/);
});

test("create_model refused for its rank (SkyRL's words) becomes the capability refusal; other failures pass through", () => {
  const svc = fakeService({ supported_models: [] });
  const skyrl = new APIStatusError("POST /api/v1/retrieve_future failed with HTTP 400", 400, { detail: "LoRA rank 64 must be between 1 and 32" });
  const err = explainCreateModelFailure(skyrl, svc, needs) as Error;
  assert.ok(err instanceof UnsupportedByServerError);
  assert.match(
    err.message,
    /cannot train lora_rank=64 on Qwen\/Qwen3-8B: it answered "LoRA rank 64 must be between 1 and 32"\. Use a smaller rank \(lora_rank=32\)/,
  );
  const failed = new RequestFailedError("LoRA rank 64 is above this server's maximum of 16", "r1", "user");
  assert.match((explainCreateModelFailure(failed, svc, needs) as Error).message, /lora_rank=16/);
  const other = new APIStatusError("HTTP 400", 400, { detail: "base model not found" });
  assert.equal(explainCreateModelFailure(other, svc, needs), other);
  const down = new APIStatusError("HTTP 503 rank", 503, "");
  assert.equal(explainCreateModelFailure(down, svc, needs), down);
});

function fakeSampler(answer: SampleResponse | Error): SamplingClient & { calls: { topk?: number }[] } {
  const calls: { topk?: number }[] = [];
  return {
    baseModel: "tiny",
    calls,
    async sample(_p, _n, _params, options) {
      calls.push({ topk: options?.topkPromptLogprobs });
      if (answer instanceof Error) throw answer;
      return answer;
    },
    async computeLogprobs() {
      return [];
    },
  };
}

test("top-k prompt logprobs: a 400, or an answer without them, refuses with the alternatives; an answer with them passes", async () => {
  const who = {
    recipe: "off_policy_distillation",
    server: "the server at http://gpu-box:8000",
    role: "the teacher's soft targets",
    alternatives: "Try teacher.base_url=local.",
  };
  const refused = fakeSampler(new APIStatusError("HTTP 400", 400, { detail: "topk_prompt_logprobs is not supported by the JAX backend" }));
  await assert.rejects(
    requireTopkPromptLogprobs(refused, 20, who),
    /^UnsupportedByServerError: off_policy_distillation: the server at http:\/\/gpu-box:8000 does not give top-k prompt logprobs \(k=20\), needed for the teacher's soft targets; it answered "topk_prompt_logprobs is not supported by the JAX backend"\. Try teacher.base_url=local\.$/,
  );
  assert.deepEqual(refused.calls, [{ topk: 20 }]);
  const silent = fakeSampler({ sequences: [{ stop_reason: "length", tokens: [3] }], prompt_logprobs: [null, -1] });
  await assert.rejects(requireTopkPromptLogprobs(silent, 5, who), /it answered without them/);
  const good = fakeSampler({ sequences: [{ stop_reason: "length", tokens: [3] }], topk_prompt_logprobs: [null, [[2, -0.1]]] });
  await requireTopkPromptLogprobs(good, 5, who);
  // A dropped connection is not a missing feature.
  await assert.rejects(requireTopkPromptLogprobs(fakeSampler(new TypeError("socket hang up")), 5, who), TypeError);
});
