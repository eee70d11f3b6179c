// The OpenAI API of `cookbook serve`: GET /v1/models, POST /v1/completions and
// POST /v1/chat/completions (streamed as server-sent events when asked), over any base model or
// tinker:// checkpoint the server holds. Prompts come from the model's renderer, replies are read
// back by it (reasoning, tool calls), and tokens come from the engine's sampler; streaming samples
// in growing chunks (src/replyStream.ts), so the first words arrive after a few tokens.
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import type { z } from "zod";
import { getTextContent } from "../../renderers/content.ts";
import type { StreamDelta } from "../../renderers/streaming.ts";
import { IncrementalDecoder, streamReply } from "../../replyStream.ts";
import type { StopCondition } from "../../completers.ts";
import type { ModelInput } from "../../tinker/types.ts";
import type { Call, Handler, Reply, ServerCore } from "../core.ts";
import { parseJsonBody } from "../http.ts";
import { modelInputLength } from "../../tinker/modelInput.ts";
import { conversation, cutAtStop, invalidRequest, replyMessage } from "./messages.ts";
import { ChatCompletionRequestSchema, CompletionRequestSchema, type ChatCompletionRequest } from "./schemas.ts";
import { OpenAITargets, type Target } from "./targets.ts";

const DEFAULT_CHAT_MAX_TOKENS = 512;
/** The legacy completions endpoint's documented default. */
const DEFAULT_COMPLETION_MAX_TOKENS = 16;

const targetsOf = new WeakMap<ServerCore, OpenAITargets>();
function targets(core: ServerCore): OpenAITargets {
  let t = targetsOf.get(core);
  if (t === undefined) {
    t = new OpenAITargets(core);
    targetsOf.set(core, t);
  }
  return t;
}

function parse<S extends z.ZodType>(call: Call, schema: S): z.output<S> {
  const r = schema.safeParse(parseJsonBody(call.body));
  if (!r.success) {
    const first = r.error.issues[0];
    const detail = r.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
    throw invalidRequest(`invalid request body: ${detail}`, first !== undefined && first.path.length > 0 ? first.path.join(".") : null);
  }
  return r.data;
}

const now = (): number => Math.floor(Date.now() / 1000);
const newId = (prefix: string): string => `${prefix}-${randomBytes(12).toString("hex")}`;
const stopList = (stop: string | string[] | null | undefined): string[] =>
  stop === null || stop === undefined ? [] : typeof stop === "string" ? [stop] : stop;

/** max_tokens bounded by what is left of the context window; a prompt that fills it is a 400. */
function maxTokensFor(target: Target, promptTokens: number, requested: number | null | undefined, fallback: number): number {
  const room = target.contextLength === undefined ? Infinity : target.contextLength - promptTokens;
  if (room <= 0) {
    throw invalidRequest(
      `the prompt has ${promptTokens} tokens, which fills ${target.id}'s context window of ${target.contextLength} tokens; shorten the messages`,
      "messages",
    );
  }
  return Math.min(requested ?? fallback, room);
}

/** Renderer stops plus the request's own stop strings when both are strings (the sampler then stops on either). */
function samplerStop(target: Target, userStops: string[]): StopCondition {
  const own = target.renderer.getStopSequences();
  if (own.length === 0) return userStops;
  return typeof own[0] === "string" ? [...(own as string[]), ...userStops] : own;
}

export const listModels: Handler = async (core) => {
  const created = now();
  const caps = core.features.capabilities(await core.service.getServerCapabilities());
  const data: { id: string; object: "model"; created: number; owned_by: string }[] = [];
  for (const m of caps.supported_models) if (m.model_name !== undefined) data.push({ id: m.model_name, object: "model", created, owned_by: "cookbook" });
  const runs = await core.rest.listTrainingRuns({ limit: Number.MAX_SAFE_INTEGER, offset: 0 });
  for (const run of runs.training_runs) {
    for (const c of (await core.rest.listCheckpoints(run.training_run_id)).checkpoints) {
      if (c.checkpoint_type !== "sampler") continue;
      const t = Date.parse(c.time);
      data.push({ id: c.tinker_path, object: "model", created: Number.isFinite(t) ? Math.floor(t / 1000) : created, owned_by: run.model_owner });
    }
  }
  return { json: { object: "list", data } };
};

export const getModel: Handler = async (core, call) => {
  const id = call.params[0]!;
  const target = await targets(core).get(id);
  return { json: { id: target.id, object: "model", created: now(), owned_by: "cookbook" } };
};

export const chatCompletions: Handler = async (core, call) => {
  const req = parse(call, ChatCompletionRequestSchema);
  const target = await targets(core).get(req.model);
  let prompt: ModelInput;
  try {
    prompt = target.renderer.buildGenerationPrompt(conversation(req, target.renderer));
  } catch (err) {
    if ((err as { status?: number }).status !== undefined) throw err;
    throw invalidRequest(`messages cannot be rendered for ${target.id} (renderer ${target.rendererName}): ${(err as Error).message}`, "messages");
  }
  const promptTokens = modelInputLength(prompt);
  const userStops = stopList(req.stop);
  const params = {
    max_tokens: maxTokensFor(target, promptTokens, req.max_completion_tokens ?? req.max_tokens, DEFAULT_CHAT_MAX_TOKENS),
    temperature: req.temperature ?? 1,
    top_p: req.top_p ?? 1,
    stop: samplerStop(target, userStops),
    ...(req.seed !== null && req.seed !== undefined ? { seed: req.seed } : {}),
  };
  const head = { id: newId("chatcmpl"), created: now(), model: req.model };
  if (req.stream === true) {
    if ((req.n ?? 1) !== 1) throw invalidRequest("stream=true takes n=1 only; ask for several completions without streaming", "n");
    return sse(call, (send) => streamChat(target, req, prompt, promptTokens, params, userStops, head, send));
  }
  const res = await target.sampler.sample(prompt, req.n ?? 1, params);
  let completionTokens = 0;
  const choices = res.sequences.map((seq, index) => {
    completionTokens += seq.tokens.length;
    const parsed = target.renderer.parseResponse(seq.tokens);
    const cut = cutAtStop(getTextContent(parsed.message), userStops);
    const msg = replyMessage(parsed.message, cut.text);
    const finish = msg.tool_calls !== undefined ? "tool_calls" : seq.stop_reason === "stop" || cut.stopped ? "stop" : "length";
    return {
      index,
      message: { role: "assistant", ...msg, content: msg.tool_calls !== undefined && cut.text === "" ? null : cut.text },
      logprobs: null,
      finish_reason: finish,
    };
  });
  return {
    json: {
      ...head,
      object: "chat.completion",
      choices,
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    },
  };
};

type Send = (event: unknown) => void;

async function streamChat(
  target: Target,
  req: ChatCompletionRequest,
  prompt: ModelInput,
  promptTokens: number,
  params: { max_tokens: number; temperature: number; top_p: number; stop: StopCondition; seed?: number },
  userStops: string[],
  head: { id: string; created: number; model: string },
  send: Send,
): Promise<void> {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): void =>
    send({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const parser = target.renderer.createStreamParser();
  const rendererStops = target.renderer.getStopSequences().filter((s): s is string => typeof s === "string");
  const all: number[] = [];
  let content = "";
  let shown = 0;
  let userStopped = false;
  const emit = (deltas: StreamDelta[]): void => {
    for (const d of deltas) {
      if (d.type === "header") chunk({ role: "assistant", content: "" });
      else if (d.type === "thinking") chunk({ reasoning_content: d.thinking });
      else if (!userStopped) {
        content += d.text;
        const cut = cutAtStop(content, userStops);
        userStopped = cut.stopped;
        // Renderers separate the reply from its header with a space (role_colon's "Assistant: ")
        // that their parseResponse drops; the stream drops it too, so both give the same text.
        const text = cut.text.trimStart();
        if (text.length > shown) chunk({ content: text.slice(shown) });
        shown = text.length;
      }
    }
  };
  const result = await streamReply(
    target.sampler,
    prompt,
    {
      maxTokens: params.max_tokens,
      temperature: params.temperature,
      topP: params.top_p,
      stop: params.stop,
      ...(params.seed !== undefined ? { seed: params.seed } : {}),
    },
    (tokens) => {
      all.push(...tokens);
      emit(parser.feed(tokens));
      // A stop string split across two chunks is only seen here.
      return userStopped || (rendererStops.length > 0 && rendererStops.some((s) => target.tokenizer.decode(all).includes(s)));
    },
  );
  const fin = parser.finish();
  emit(fin.deltas);
  const msg = replyMessage(fin.message, "");
  if (msg.tool_calls !== undefined) chunk({ tool_calls: msg.tool_calls.map((tc, index) => ({ index, ...tc })) });
  const finish = msg.tool_calls !== undefined ? "tool_calls" : result.stopReason === "stop" || userStopped ? "stop" : "length";
  chunk({}, finish);
  if (req.stream_options?.include_usage === true) {
    send({
      ...head,
      object: "chat.completion.chunk",
      choices: [],
      usage: { prompt_tokens: promptTokens, completion_tokens: all.length, total_tokens: promptTokens + all.length },
    });
  }
}

export const completions: Handler = async (core, call) => {
  const req = parse(call, CompletionRequestSchema);
  const target = await targets(core).get(req.model);
  const tokens =
    typeof req.prompt === "string" || typeof req.prompt[0] === "string"
      ? target.tokenizer.encode(typeof req.prompt === "string" ? req.prompt : (req.prompt[0] as string), { addSpecialTokens: true })
      : (req.prompt as number[]);
  const prompt: ModelInput = { chunks: [{ type: "encoded_text", tokens }] };
  const userStops = stopList(req.stop);
  const eos = target.tokenizer.eosTokenId;
  const params = {
    max_tokens: maxTokensFor(target, tokens.length, req.max_tokens, DEFAULT_COMPLETION_MAX_TOKENS),
    temperature: req.temperature ?? 1,
    top_p: req.top_p ?? 1,
    // Stop strings when asked for; otherwise the end-of-text token ends a completion.
    stop: userStops.length > 0 ? userStops : eos !== null ? [eos] : [],
    ...(req.seed !== null && req.seed !== undefined ? { seed: req.seed } : {}),
  };
  const head = { id: newId("cmpl"), created: now(), model: req.model };
  const untilEos = (t: readonly number[]): { tokens: number[]; ended: boolean } => {
    const at = eos === null ? -1 : t.indexOf(eos);
    return at === -1 ? { tokens: [...t], ended: false } : { tokens: t.slice(0, at), ended: true };
  };
  if (req.stream === true) {
    if ((req.n ?? 1) !== 1) throw invalidRequest("stream=true takes n=1 only; ask for several completions without streaming", "n");
    return sse(call, async (send) => {
      const decoder = new IncrementalDecoder(target.tokenizer, userStops);
      const piece = (text: string, finish: string | null = null): void =>
        send({ ...head, object: "text_completion", choices: [{ text, index: 0, logprobs: null, finish_reason: finish }] });
      let ended = false;
      let count = 0;
      const result = await streamReply(
        target.sampler,
        prompt,
        {
          maxTokens: params.max_tokens,
          temperature: params.temperature,
          topP: params.top_p,
          stop: params.stop,
          ...(params.seed !== undefined ? { seed: params.seed } : {}),
        },
        (chunkTokens) => {
          const kept = untilEos(chunkTokens);
          count += chunkTokens.length;
          ended = kept.ended;
          const text = decoder.push(kept.tokens);
          if (text !== "") piece(text);
          return ended || (userStops.length > 0 && decoder.stopIndex() !== -1);
        },
      );
      const rest = decoder.flush();
      const stopped = ended || result.stopReason === "stop" || decoder.stopIndex() !== -1;
      piece(rest, stopped ? "stop" : "length");
      if (req.stream_options?.include_usage === true) {
        send({
          ...head,
          object: "text_completion",
          choices: [],
          usage: { prompt_tokens: tokens.length, completion_tokens: count, total_tokens: tokens.length + count },
        });
      }
    });
  }
  const res = await target.sampler.sample(prompt, req.n ?? 1, params);
  let completionTokens = 0;
  const choices = res.sequences.map((seq, index) => {
    completionTokens += seq.tokens.length;
    const kept = untilEos(seq.tokens);
    const cut = cutAtStop(target.tokenizer.decode(kept.tokens, { skipSpecialTokens: true }), userStops);
    return { text: cut.text, index, logprobs: null, finish_reason: kept.ended || cut.stopped || seq.stop_reason === "stop" ? "stop" : "length" };
  });
  return {
    json: {
      ...head,
      object: "text_completion",
      choices,
      usage: { prompt_tokens: tokens.length, completion_tokens: completionTokens, total_tokens: tokens.length + completionTokens },
    },
  };
};

/**
 * A server-sent event stream: `data: <json>` per event, then `data: [DONE]`. A failure after the
 * first byte can no longer change the status, so it is sent as an `{error}` event before [DONE].
 */
function sse(call: Call, produce: (send: Send) => Promise<void>): Reply {
  const stream = new PassThrough();
  const send: Send = (event) => {
    if (!stream.writableEnded) stream.write(`data: ${JSON.stringify(event)}\n\n`);
  };
  void produce((event) => {
    if (call.signal.aborted) throw new Error("the client went away");
    send(event);
  })
    .catch((err: unknown) => {
      if (!call.signal.aborted) send({ error: { message: (err as Error).message, type: "server_error", param: null, code: null } });
    })
    .finally(() => {
      if (!stream.writableEnded) stream.end("data: [DONE]\n\n");
    });
  return { stream, contentType: "text/event-stream", headers: { "Cache-Control": "no-cache", Connection: "keep-alive" } };
}
