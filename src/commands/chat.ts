// `cookbook chat <model | tinker path>`: a chat REPL on a base model or a checkpoint, through the
// embedded engine or any Tinker server (base_url). Replies stream as they are sampled; the prompt
// is built by the model's renderer, so it is exactly what training and evaluation use.
//
// Input: one line is one message; end a line with \ to continue it, or put the message between
// two lines of """. Commands: /help, /system <text>, /set key=value…, /reset, /history,
// /save <file.jsonl>, /exit. Piped stdin works the same, without prompts or colours.
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { z } from "zod";
import { UsageError } from "../config/errors.ts";
import { parseConfigArgs } from "../config/parse.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { getTextContent, type Message } from "../renderers/index.ts";
import { getRenderer } from "../renderers/registry.ts";
import type { Renderer } from "../renderers/base.ts";
import { createServiceClient } from "../service.ts";
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";
import { isTinkerPath } from "../tinker/paths.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { IncrementalDecoder, streamReply } from "../replyStream.ts";
import { defineCommand } from "./types.ts";

export const ChatOptionsSchema = z.object({
  system: z.string().nullable().default(null).describe("System prompt put before the conversation"),
  temperature: z.number().min(0).default(0.7).describe("Sampling temperature (0 = greedy)"),
  top_p: z.number().gt(0).max(1).default(1).describe("Nucleus sampling: keep the smallest set of tokens with this much probability"),
  max_tokens: z.number().int().positive().default(512).describe("Longest reply, in tokens"),
  seed: z.number().int().nullable().default(null).describe("Seed for reproducible replies (default: fresh randomness)"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended renderer, else role_colon)"),
  model_name: z.string().nullable().default(null).describe("Model whose tokenizer and renderer to use (default: the model, or the checkpoint's base model)"),
  base_url: z.string().nullable().default(null).describe('Tinker server (default: TINKER_BASE_URL, else the embedded engine; "local" forces it)'),
  store: z.string().nullable().default(null).describe("Embedded engine's checkpoint store (default $COOKBOOK_HOME/checkpoints)"),
});
export type ChatOptions = z.output<typeof ChatOptionsSchema>;

/** Settings `/set` may change during a chat. */
const SETTABLE = ["temperature", "top_p", "max_tokens", "seed"] as const;
const SettableSchema = ChatOptionsSchema.pick({ temperature: true, top_p: true, max_tokens: true, seed: true }).partial();

export interface ChatTarget {
  sampler: SamplingClient;
  tokenizer: Tokenizer;
  renderer: Renderer;
  rendererName: string;
  modelName: string;
  /** What the chat talks to, for the banner. */
  label: string;
  close(): Promise<void>;
}

export async function openChatTarget(target: string, options: ChatOptions): Promise<ChatTarget> {
  const service: ServiceClient = await createServiceClient({
    ...(options.base_url !== null ? { baseUrl: options.base_url } : {}),
    ...(options.store !== null ? { engine: { storeDir: options.store } } : {}),
  });
  try {
    const sampler = isTinkerPath(target)
      ? await service.createSamplingClient({ modelPath: target })
      : await service.createSamplingClient({ baseModel: target });
    const modelName = options.model_name ?? (isTinkerPath(target) ? sampler.baseModel : target);
    const { getTokenizer } = await import("../tokenizers/index.ts");
    const tokenizer = await getTokenizer(modelName);
    const rendererName = resolveRendererName(modelName, options.renderer_name);
    const renderer = getRenderer(rendererName, tokenizer);
    const where = service.engineKind === "embedded" ? "embedded engine" : (options.base_url ?? process.env.TINKER_BASE_URL ?? "Tinker service");
    return {
      sampler,
      tokenizer,
      renderer,
      rendererName,
      modelName,
      label: `${target}${isTinkerPath(target) ? ` (base ${modelName})` : ""} · renderer ${rendererName} · ${where}`,
      close: () => service.close(),
    };
  } catch (err) {
    await service.close().catch(() => undefined);
    throw err;
  }
}

export interface ChatIO {
  lines: AsyncIterable<string>;
  write: (text: string) => void;
  /** A terminal: prompts, colours and timing lines are shown. */
  interactive: boolean;
  /** Shows the input prompt (a terminal's line editor draws it itself). */
  prompt?: (text: string) => void;
}

const HELP = [
  'Type a message and press Enter. End a line with \\ to continue it, or put a long message between two lines of """.',
  "  /system <text>     set the system prompt (/system alone removes it)",
  "  /set key=value …   change temperature, top_p, max_tokens or seed",
  "  /reset             forget the conversation (the system prompt stays)",
  "  /history           show the conversation",
  '  /save <file>       append the conversation to a JSONL file ({"messages": […]}, the chat_sl data format)',
  "  /exit              leave (also Ctrl-D)",
].join("\n");

/** Joins continued lines into messages: `\` at the end of a line, or a """ block. */
async function* messagesFrom(lines: AsyncIterable<string>, onContinue: () => void): AsyncGenerator<string> {
  let pending: string[] = [];
  let block = false;
  for await (const raw of lines) {
    const line = raw.replace(/\r$/, "");
    if (block) {
      if (line.trim() === '"""') {
        block = false;
        yield pending.join("\n");
        pending = [];
      } else {
        pending.push(line);
        onContinue();
      }
      continue;
    }
    if (pending.length === 0 && line.trim() === '"""') {
      block = true;
      onContinue();
      continue;
    }
    if (line.endsWith("\\")) {
      pending.push(line.slice(0, -1));
      onContinue();
      continue;
    }
    pending.push(line);
    yield pending.join("\n");
    pending = [];
  }
  if (pending.length > 0) yield pending.join("\n");
}

export async function runChat(chat: ChatTarget, initial: ChatOptions, io: ChatIO): Promise<Message[]> {
  const settings = { temperature: initial.temperature, top_p: initial.top_p, max_tokens: initial.max_tokens, seed: initial.seed };
  let system = initial.system;
  let history: Message[] = [];
  const dim = (s: string): string => (io.interactive ? `\x1b[2m${s}\x1b[22m` : s);
  const stop = chat.renderer.getStopSequences();
  const stopStrings = stop.length > 0 && typeof stop[0] === "string" ? (stop as string[]) : [];
  const conversation = (): Message[] => [...(system !== null && system !== "" ? [{ role: "system", content: system }] : []), ...history];
  const prompt = (continued = false): void => {
    if (!io.interactive) return;
    const text = continued ? "  … " : "\x1b[1myou›\x1b[22m ";
    if (io.prompt) io.prompt(text);
    else io.write(text);
  };

  if (io.interactive) io.write(dim(`chat with ${chat.label}\n/help for commands, /exit to leave\n`));
  prompt();
  for await (const text of messagesFrom(io.lines, () => prompt(true))) {
    const trimmed = text.trim();
    if (trimmed === "") {
      prompt();
      continue;
    }
    if (trimmed.startsWith("/")) {
      const [cmd, ...rest] = trimmed.split(/\s+/);
      const arg = trimmed.slice(cmd!.length).trim();
      if (cmd === "/exit" || cmd === "/quit") break;
      else if (cmd === "/help") io.write(`${HELP}\n`);
      else if (cmd === "/reset") {
        history = [];
        io.write(dim("conversation cleared\n"));
      } else if (cmd === "/system") {
        system = arg === "" ? null : arg;
        io.write(dim(system === null ? "system prompt removed\n" : "system prompt set\n"));
      } else if (cmd === "/history") {
        for (const m of conversation()) io.write(`${m.role}: ${getTextContent(m)}\n`);
      } else if (cmd === "/set") {
        try {
          const changed = parseConfigArgs(SettableSchema, rest);
          for (const key of SETTABLE) if (changed[key] !== undefined) (settings as Record<string, unknown>)[key] = changed[key];
          io.write(dim(`${SETTABLE.map((k) => `${k}=${settings[k]}`).join(" ")}\n`));
        } catch (err) {
          io.write(`error: ${(err as Error).message}\n`);
        }
      } else if (cmd === "/save") {
        if (arg === "") io.write("error: /save needs a file name\n");
        else {
          appendFileSync(arg, JSON.stringify({ messages: conversation() }) + "\n");
          io.write(dim(`saved ${conversation().length} messages to ${arg}\n`));
        }
      } else io.write(`error: unknown command ${cmd}; /help lists the commands\n`);
      prompt();
      continue;
    }

    history.push({ role: "user", content: text });
    const decoder = new IncrementalDecoder(chat.tokenizer, stopStrings);
    let started = false;
    const show = (piece: string): void => {
      let p = piece;
      if (!started) {
        p = p.replace(/^\s+/, "");
        if (p === "") return;
        started = true;
        if (io.interactive) io.write("\x1b[1mbot›\x1b[22m ");
      }
      io.write(p);
    };
    const t0 = Date.now();
    let result;
    try {
      result = await streamReply(
        chat.sampler,
        chat.renderer.buildGenerationPrompt(conversation()),
        {
          maxTokens: settings.max_tokens,
          temperature: settings.temperature,
          topP: settings.top_p,
          ...(settings.seed !== null ? { seed: settings.seed } : {}),
          stop,
        },
        (tokens) => {
          show(decoder.push(tokens));
          return stopStrings.length > 0 && decoder.stopIndex() !== -1;
        },
      );
    } catch (err) {
      history.pop();
      io.write(`\nerror: ${(err as Error).message}\n`);
      prompt();
      continue;
    }
    show(decoder.flush());
    const { message } = chat.renderer.parseResponse(result.tokens);
    history.push({ role: "assistant", content: message.content });
    io.write("\n");
    if (io.interactive) {
      const seconds = (Date.now() - t0) / 1000;
      io.write(
        dim(
          `[${result.tokens.length} tokens · ${(result.tokens.length / Math.max(seconds, 1e-3)).toFixed(1)} tok/s · ${result.stopReason === "stop" ? "done" : "hit max_tokens"}]\n`,
        ),
      );
    }
    prompt();
  }
  return conversation();
}

interface ChatArgs {
  target: string;
  system?: string;
  temperature?: number;
  "top-p"?: number;
  "max-tokens"?: number;
  seed?: number;
  renderer?: string;
  "model-name"?: string;
  "base-url"?: string;
  store?: string;
}

const d = ChatOptionsSchema.shape;

export const chatCommand = defineCommand<ChatArgs>({
  builder: (y) =>
    y
      .positional("target", { type: "string", demandOption: true, describe: "model name (HF id, folder, fixture) or tinker://<run>/sampler_weights/<name>" })
      .option("system", { alias: "s", type: "string", describe: d.system.description })
      .option("temperature", { alias: "t", type: "number", describe: `${d.temperature.description} (default 0.7)` })
      .option("top-p", { type: "number", describe: `${d.top_p.description} (default 1)` })
      .option("max-tokens", { type: "number", describe: `${d.max_tokens.description} (default 512)` })
      .option("seed", { type: "number", describe: d.seed.description })
      .option("renderer", { type: "string", describe: d.renderer_name.description })
      .option("model-name", { type: "string", describe: d.model_name.description })
      .option("base-url", { type: "string", describe: d.base_url.description })
      .option("store", { type: "string", describe: d.store.description })
      .parserConfiguration({ "parse-positional-numbers": false }),
  handler: async (argv) => {
    const parsed = ChatOptionsSchema.safeParse({
      system: argv.system ?? null,
      temperature: argv.temperature,
      top_p: argv["top-p"],
      max_tokens: argv["max-tokens"],
      seed: argv.seed ?? null,
      renderer_name: argv.renderer ?? null,
      model_name: argv["model-name"] ?? null,
      base_url: argv["base-url"] ?? null,
      store: argv.store ?? null,
    });
    if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `--${String(i.path[0]).replace(/_/g, "-")}: ${i.message}`).join("; "));
    const chat = await openChatTarget(argv.target, parsed.data);
    const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
    // On a terminal, readline gives line editing and ↑/↓ recall of earlier inputs.
    const rl = createInterface({
      input: process.stdin,
      output: interactive ? process.stdout : undefined,
      terminal: interactive,
      historySize: interactive ? 200 : 0,
    });
    rl.on("SIGINT", () => rl.close());
    try {
      await runChat(chat, parsed.data, {
        lines: rl,
        write: (t) => process.stdout.write(t),
        interactive,
        prompt: (text) => {
          rl.setPrompt(text);
          rl.prompt();
        },
      });
    } finally {
      rl.close();
      await chat.close();
    }
  },
});
