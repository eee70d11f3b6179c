// A small stateful Tinker-compatible server for round-trip tests: requests become futures that
// retrieve_future answers (optionally after one try_again).
import { parseMessage, getRepeatedMessages, getString, getInt } from "../../../src/tinker/http/proto/wire.ts";
import type { RecordedRequest, Reply } from "./fakeServer.ts";

export interface FakeTinkerOptions {
  clientConfig?: Record<string, unknown> | "404";
  tryAgainFirst?: boolean;
  heartbeatStatus?: () => number;
  /**
   * Answer as SkyRL tx does: optional fields as explicit nulls, short `tinker://<id>/<name>`
   * sampler paths, prompt logprobs without the leading null, fewer fields in REST answers.
   */
  skyrl?: boolean;
}

export class FakeTinker {
  readonly seqLog: { modelId: string; seqId: number; path: string }[] = [];
  readonly futures = new Map<string, unknown>();
  private pendingOnce = new Set<string>();
  private nextRequest = 1;
  /** Sampling sessions created (a test can check how many a client opened). */
  samplingSessions = 0;

  constructor(private readonly o: FakeTinkerOptions = {}) {}

  handler = (req: RecordedRequest): Reply => {
    const route = `${req.method} ${req.path}`;
    const body = req.body.length > 0 && req.headers["content-type"] === "application/json" ? req.json() : {};
    const future = (result: unknown): Reply => {
      const id = `req-${this.nextRequest++}`;
      this.futures.set(id, result);
      if (this.o.tryAgainFirst) this.pendingOnce.add(id);
      return { json: { request_id: id } };
    };
    const logSeq = (): void => {
      this.seqLog.push({ modelId: String(body["model_id"]), seqId: Number(body["seq_id"]), path: req.path });
    };
    switch (route) {
      case "POST /api/v1/client/config":
        return this.o.clientConfig === undefined || this.o.clientConfig === "404"
          ? { status: 404, json: { detail: "Not Found" } }
          : { json: this.o.clientConfig };
      case "POST /api/v1/create_session":
        return {
          json: {
            session_id: "sess",
            info_message: "welcome",
            ...(this.o.skyrl ? { warning_message: null, error_message: null, type: "create_session" } : {}),
          },
        };
      case "POST /api/v1/session_heartbeat":
        return { status: this.o.heartbeatStatus?.() ?? 200, json: { type: "session_heartbeat" } };
      case "GET /api/v1/get_server_capabilities":
        return { json: { supported_models: [{ model_name: "tiny" }] } };
      case "POST /api/v1/create_model":
        return future({ model_id: `${String(body["session_id"])}:train:${String(body["model_seq_id"])}`, type: "create_model" });
      case "POST /api/v1/forward":
      case "POST /api/v1/forward_backward": {
        if (req.headers["content-type"] === "application/x-protobuf") {
          const m = parseMessage(new Uint8Array(req.body), "request");
          this.seqLog.push({ modelId: getString(m, 1), seqId: getInt(m, 2), path: req.path + (getInt(m, 6) ? "?forward_only" : "") });
          const n = getRepeatedMessages(m, 3).length;
          return future(fwdOutput(Array.from({ length: n }, () => 1)));
        }
        logSeq();
        const input = (body["forward_backward_input"] ?? body["forward_input"]) as { data: { model_input: { chunks: { tokens: number[] }[] } }[] };
        return future(fwdOutput(input.data.map((d) => d.model_input.chunks[0]!.tokens.length)));
      }
      case "POST /api/v1/optim_step":
        logSeq();
        return future({ metrics: { "lr:mean": (body["adam_params"] as { learning_rate: number }).learning_rate } });
      case "POST /api/v1/save_weights":
        logSeq();
        return future({ path: `tinker://${String(body["model_id"])}/weights/${String(body["path"])}`, type: "save_weights" });
      case "POST /api/v1/load_weights":
        logSeq();
        return future({ path: String(body["path"]), type: "load_weights" });
      case "POST /api/v1/save_weights_for_sampler":
        logSeq();
        if (this.o.skyrl) {
          const named = typeof body["path"] === "string";
          return future({
            path: named ? `tinker://${String(body["model_id"])}/${String(body["path"])}` : null,
            sampling_session_id: named ? null : `sampling_${String(body["sampling_session_seq_id"])}`,
            type: "save_weights_for_sampler",
          });
        }
        return future(
          body["path"] !== undefined
            ? { path: `tinker://${String(body["model_id"])}/sampler_weights/${String(body["path"])}` }
            : { sampling_session_id: `eph-${String(body["sampling_session_seq_id"])}` },
        );
      case "POST /api/v1/get_info":
        if (this.o.skyrl) {
          return { json: { model_id: body["model_id"], status: "ready", model_data: { base_model: "tiny", lora_config: { rank: 8 }, model_name: null } } };
        }
        return { json: { model_id: body["model_id"], model_data: { model_name: "tiny", tokenizer_id: "org/tok:main" }, is_lora: true, lora_rank: 8 } };
      case "POST /api/v1/weights_info":
        return { json: { base_model: "tiny", is_lora: true, lora_rank: 8, train_mlp: true, train_attn: false, train_unembed: false } };
      case "POST /api/v1/create_sampling_session":
        this.samplingSessions++;
        return { json: { sampling_session_id: `samp-${String(body["sampling_session_seq_id"])}` } };
      case "POST /api/v1/asample": {
        this.seqLog.push({ modelId: String(body["sampling_session_id"]), seqId: Number(body["seq_id"]), path: req.path });
        // Token t of the prompt gets logprob -t, so alignment is checkable.
        const prompt = (body["prompt"] as { chunks: { tokens: number[] }[] }).chunks.flatMap((c) => c.tokens);
        const scored = prompt.slice(1).map((t) => -t);
        return future({
          type: "sample",
          sequences: Array.from({ length: Number(body["num_samples"]) }, (_, i) => ({ stop_reason: "length", tokens: [i], logprobs: [-1] })),
          prompt_logprobs: body["prompt_logprobs"] ? (this.o.skyrl ? scored : [null, ...scored]) : this.o.skyrl ? null : undefined,
          ...(this.o.skyrl ? { topk_prompt_logprobs: null } : {}),
        });
      }
      case "POST /api/v1/retrieve_future": {
        const id = String(body["request_id"]);
        if (this.pendingOnce.delete(id)) return { json: { type: "try_again", request_id: id, queue_state: "active" } };
        return this.futures.has(id) ? { json: this.futures.get(id) } : { status: 404, json: { detail: `unknown ${id}` } };
      }
      case "GET /api/v1/training_runs":
        return {
          json: {
            training_runs: [{ training_run_id: "sess:train:0", base_model: "tiny", model_owner: "me", is_lora: true, last_request_time: "t" }],
            cursor: { offset: Number(req.query.get("offset")), limit: Number(req.query.get("limit")), total_count: 1 },
          },
        };
      default:
        if (req.method === "GET" && req.path.startsWith("/api/v1/samplers/")) {
          return { json: { sampler_id: req.path.split("/").pop(), base_model: "tiny" } };
        }
        if (req.method === "DELETE" && req.path.startsWith("/api/v1/training_runs/")) return { status: 204 };
        if (this.o.skyrl && req.method === "GET" && /^\/api\/v1\/training_runs\/[^/]+\/checkpoints\/[^/]+\/archive$/.test(req.path)) {
          return { status: 302, headers: { location: `${req.path.replace(/archive$/, "download")}` } };
        }
        if (req.method === "GET" && req.path.endsWith("/checkpoints")) {
          if (this.o.skyrl) {
            return {
              json: {
                checkpoints: [{ checkpoint_id: "s1", checkpoint_type: "sampler", time: "2026-11-26T10:00:00", tinker_path: "tinker://m/sampler_weights/s1" }],
              },
            };
          }
          return { json: { checkpoints: [{ checkpoint_id: "weights/a", checkpoint_type: "training", time: "t", tinker_path: "tinker://m/weights/a" }] } };
        }
        return { status: 404, json: { detail: `no route ${route}` } };
    }
  };
}

/** One output per datum with `n` logprobs; loss:sum counts datums so merged sums are checkable. */
function fwdOutput(lengths: number[]): unknown {
  return {
    loss_fn_output_type: "CrossEntropyLossReturn",
    loss_fn_outputs: lengths.map((n) => ({ logprobs: { data: Array.from({ length: n }, () => -0.5), dtype: "float32", shape: [n] } })),
    metrics: { "loss:sum": lengths.length, "datums:mean": lengths.length },
  };
}
