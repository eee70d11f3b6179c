// `cookbook viz-data <file.jsonl> model_name=… [renderer_name=…] [train_on_what=…] [max_length=…]`:
// shows each conversation as the tokens it trains on, trained tokens highlighted. On a terminal,
// one example per keypress (Enter/space next, q quit) unless --all; otherwise everything, plain.
import { z } from "zod";
import { parseConfigArgs } from "../config/parse.ts";
import { colorizeExample } from "../display.ts";
import { resolveRendererName, warnIfRendererNotRecommended } from "../modelInfo.ts";
import { getRenderer } from "../renderers/registry.ts";
import { TrainOnWhatSchema } from "../renderers/types.ts";
import { conversationToDatum } from "../supervised/common.ts";
import { checkRoles, DataFormatError, readConversationFile } from "../supervised/conversationFile.ts";
import { defineCommand } from "./types.ts";

export const VizDataConfigSchema = z.object({
  model_name: z.string().describe("model whose tokenizer to use: HF name, local directory, or fixtures/models name"),
  renderer_name: z.string().nullable().default(null).describe("renderer (default: the model's recommended one)"),
  train_on_what: TrainOnWhatSchema.default("all_assistant_messages").describe("which tokens carry loss"),
  max_length: z.number().int().positive().nullable().default(null).describe("truncate examples to this many tokens"),
});
export type VizDataConfig = z.output<typeof VizDataConfigSchema>;

export interface VizDataIO {
  write: (text: string) => void;
  /** Colour and one-at-a-time paging (stdout is a terminal). */
  interactive: boolean;
  /** Resolves with the next key pressed (interactive mode only). */
  readKey: () => Promise<string>;
}

export async function runVizData(file: string, config: VizDataConfig, all: boolean, io: VizDataIO): Promise<void> {
  // Like every recipe: a model without a recommended renderer (a fixture, a local folder) gets
  // role_colon, the base-model format.
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  if (config.renderer_name !== null) {
    warnIfRendererNotRecommended(config.model_name, rendererName, (m) => io.write(`warning: ${m}\n`));
  }
  // The file first: a malformed line is reported before the (slow) tokenizer load.
  const rows = readConversationFile(file);
  if (rows.length === 0) {
    io.write(`${file}: no conversations\n`);
    return;
  }
  // Loaded on use: transformers takes a second or two to import, which every other command would pay.
  const { getTokenizer } = await import("../tokenizers/index.ts");
  const tokenizer = await getTokenizer(config.model_name);
  const renderer = getRenderer(rendererName, tokenizer);
  for (let i = 0; i < rows.length; i++) {
    const { line, messages } = rows[i]!;
    const where = `${file}:${line}`;
    checkRoles(messages, renderer.knownRoles(), rendererName, where);
    let datum;
    try {
      datum = conversationToDatum(messages, renderer, config.max_length, config.train_on_what, "mean");
    } catch (err) {
      throw new DataFormatError(`${where}: ${(err as Error).message}`);
    }
    const weights = datum.loss_fn_inputs["weights"]!.data;
    const trained = weights.filter((w) => w > 0).length;
    io.write(
      `== example ${i + 1}/${rows.length} (line ${line}) · ${weights.length + 1} tokens · ${trained} trained · ` +
        `renderer ${rendererName} · train_on_what=${config.train_on_what} ==\n`,
    );
    io.write(`${colorizeExample(datum, tokenizer, { color: io.interactive })}\n\n`);
    if (io.interactive && !all && i < rows.length - 1) {
      io.write("-- Enter/space: next · q: quit --\n");
      const key = await io.readKey();
      if (key === "q" || key === "Q" || key === "\u0003" || key === "\u001b") return;
    }
  }
}

/** One keypress from a TTY stdin, in raw mode. */
function readKeyFromStdin(): Promise<string> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    stdin.setRawMode?.(true);
    stdin.resume();
    stdin.once("data", (buf: Buffer) => {
      stdin.setRawMode?.(false);
      stdin.pause();
      resolve(buf.toString("utf8"));
    });
  });
}

interface VizArgs {
  file: string;
  args: string[];
  all?: boolean;
}

export const vizDataCommand = defineCommand<VizArgs>({
  builder: (y) =>
    y
      .positional("file", { type: "string", demandOption: true, describe: 'JSONL file, one {"messages": [...]} per line' })
      .positional("args", {
        type: "string",
        array: true,
        default: [],
        describe: "model_name=… renderer_name=… train_on_what=… max_length=…",
      })
      .option("all", { type: "boolean", describe: "print every example without waiting for a key" })
      .parserConfiguration({ "parse-positional-numbers": false }),
  handler: async (argv) => {
    const config = parseConfigArgs(VizDataConfigSchema, argv.args.map(String));
    const interactive = Boolean(process.stdout.isTTY);
    await runVizData(argv.file, config, Boolean(argv.all), {
      write: (t) => process.stdout.write(t),
      interactive,
      readKey: interactive && process.stdin.isTTY ? readKeyFromStdin : () => Promise.resolve("\r"),
    });
  },
});
