// `cookbook export <tinker path> --adapter|--merged`: writes a checkpoint as a PEFT adapter folder
// (adapter_model.safetensors + adapter_config.json naming the real base model) or as a full
// Hugging Face model with the LoRA merged in (bf16 or fp32, sharded with an index when large),
// both with the tokenizer files. Works on the embedded engine's store and through a Tinker server.
import { z } from "zod";
import { UsageError } from "../config/errors.ts";
import { parseByteSize } from "../export/byteSize.ts";
import { parseTinkerPath } from "../tinker/paths.ts";
import { defineCommand } from "./types.ts";

export const ExportOptionsSchema = z.object({
  mode: z.enum(["adapter", "merged"]).describe("--adapter: a PEFT adapter folder; --merged: a full model with the LoRA merged in"),
  out: z.string().min(1).nullable().default(null).describe("Output folder, created; must not exist or be empty (default ./<run>-<checkpoint>-<mode>)"),
  dtype: z
    .enum(["bf16", "fp32"])
    .nullable()
    .default(null)
    .describe("Stored float type (default: bf16 for --merged like transformers' save_pretrained of a bf16 model, fp32 for --adapter as trained)"),
  max_shard_size: z
    .string()
    .default("5GB")
    .refine((v) => {
      try {
        return parseByteSize(v) > 0;
      } catch {
        return false;
      }
    }, "not a size; expected e.g. 5GB, 500MB, 2GiB or a number of bytes")
    .describe("Largest weight file of a merged model; bigger models are sharded with model.safetensors.index.json"),
  base_url: z
    .string()
    .nullable()
    .default(null)
    .describe('Tinker server the checkpoint lives on (default: TINKER_BASE_URL, else the embedded engine; "local" forces it)'),
  store: z.string().nullable().default(null).describe("Embedded engine's checkpoint store (default $COOKBOOK_HOME/checkpoints)"),
  base_model_name: z
    .string()
    .nullable()
    .default(null)
    .describe("Name written as base_model_name_or_path (default: the hub id of the base model, or its folder for local models)"),
});
export type ExportCommandOptions = z.output<typeof ExportOptionsSchema>;

interface ExportArgs {
  path: string;
  adapter?: boolean;
  merged?: boolean;
  out?: string;
  dtype?: string;
  "max-shard-size"?: string;
  "base-url"?: string;
  store?: string;
  "base-model-name"?: string;
}

const d = ExportOptionsSchema.shape;

export async function runExport(path: string, options: ExportCommandOptions, write: (line: string) => void): Promise<void> {
  const p = parseTinkerPath(path);
  const { exportCheckpoint } = await import("../export/index.ts");
  const outDir = options.out ?? `${p.modelId}-${p.name}-${options.mode}`;
  const result = await exportCheckpoint(path, {
    mode: options.mode,
    outDir,
    dtype: options.dtype ?? (options.mode === "merged" ? "bf16" : "fp32"),
    maxShardBytes: parseByteSize(options.max_shard_size),
    baseUrl: options.base_url ?? undefined,
    storeDir: options.store ?? undefined,
    baseModelName: options.base_model_name ?? undefined,
    log: (line) => write(line),
  });
  write(`exported ${path} as ${options.mode === "adapter" ? "a PEFT adapter" : "a merged model"} to ${result.outDir}`);
  write(`  base model: ${result.baseModelNameOrPath}${result.untiedHead ? " (lm_head untied from the embeddings: the adapter trained it)" : ""}`);
  write(`  files: ${result.files.join(", ")}`);
}

export const exportCommand = defineCommand<ExportArgs>({
  builder: (y) =>
    y
      .positional("path", { type: "string", demandOption: true, describe: "tinker://<run>/sampler_weights/<name> or …/weights/<name>" })
      .option("adapter", { type: "boolean", describe: "write a PEFT adapter folder" })
      .option("merged", { type: "boolean", describe: "write a full model folder with the LoRA merged in" })
      .option("out", { alias: "o", type: "string", describe: d.out.description })
      .option("dtype", { type: "string", choices: ["bf16", "fp32"], describe: d.dtype.description })
      .option("max-shard-size", { type: "string", describe: `${d.max_shard_size.description} (default 5GB)` })
      .option("base-url", { type: "string", describe: d.base_url.description })
      .option("store", { type: "string", describe: d.store.description })
      .option("base-model-name", { type: "string", describe: d.base_model_name.description })
      .parserConfiguration({ "parse-positional-numbers": false }),
  handler: async (argv) => {
    if (Boolean(argv.adapter) === Boolean(argv.merged)) throw new UsageError("pass exactly one of --adapter and --merged");
    const parsed = ExportOptionsSchema.safeParse({
      mode: argv.adapter ? "adapter" : "merged",
      out: argv.out ?? null,
      dtype: argv.dtype ?? null,
      max_shard_size: argv["max-shard-size"],
      base_url: argv["base-url"] ?? null,
      store: argv.store ?? null,
      base_model_name: argv["base-model-name"] ?? null,
    });
    if (!parsed.success) {
      throw new UsageError(
        parsed.error.issues
          .map(
            (i) => `--${String(i.path[0]).replace(/_/g, "-")} ${JSON.stringify(argv[String(i.path[0]).replace(/_/g, "-") as keyof ExportArgs])}: ${i.message}`,
          )
          .join("; "),
      );
    }
    await runExport(argv.path, parsed.data, (line) => process.stdout.write(`${line}\n`));
  },
});
