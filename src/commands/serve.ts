// `cookbook serve`: serves the embedded engine over the Tinker HTTP protocol until interrupted.
// Prints one line "cookbook serve: listening on <url>" on stdout once the port is bound (with
// --port 0 that is how a caller learns the port).
import { UsageError } from "../config/errors.ts";
import { ServeOptionsSchema, type ServeOptions } from "../server/options.ts";
import { ConfigurationError } from "../tinker/errors.ts";
import { defineCommand } from "./types.ts";

interface ServeArgs {
  host?: string;
  port?: number;
  "api-key"?: string;
  store?: string;
  kernels?: string;
  "session-timeout"?: number;
  "max-body-mb"?: number;
  "long-poll"?: number;
  models?: string;
  "max-lora-rank"?: number;
  "topk-prompt-logprobs"?: boolean;
}

const d = ServeOptionsSchema.shape;

export const serveCommand = defineCommand<ServeArgs>({
  builder: (y) =>
    y
      .option("host", { type: "string", describe: `${d.host.description} (default 127.0.0.1)` })
      .option("port", { type: "number", describe: `${d.port.description} (default 8000)` })
      .option("api-key", { type: "string", describe: d.apiKey.description })
      .option("store", { type: "string", describe: d.storeDir.description })
      .option("kernels", { type: "string", choices: ["native", "reference"], describe: d.kernels.description })
      .option("session-timeout", { type: "number", describe: `${d.sessionTimeoutSec.description}, in seconds (default 300)` })
      .option("max-body-mb", { type: "number", describe: "Largest request body in MiB (default 64)" })
      .option("long-poll", { type: "number", describe: `${d.longPollSec.description}, in seconds (default 30)` })
      .option("models", { type: "string", describe: `${d.models.description} (comma-separated)` })
      .option("max-lora-rank", { type: "number", describe: d.maxLoraRank.description })
      .option("topk-prompt-logprobs", { type: "boolean", describe: `${d.topkPromptLogprobs.description} (--no-topk-prompt-logprobs; default on)` }),
  handler: async (argv) => {
    const options: ServeOptions = {};
    if (argv.host !== undefined) options.host = argv.host;
    if (argv.port !== undefined) options.port = argv.port;
    const apiKey = argv["api-key"] ?? (process.env.COOKBOOK_SERVE_API_KEY || undefined);
    if (apiKey !== undefined) options.apiKey = apiKey;
    if (argv.store !== undefined) options.storeDir = argv.store;
    if (argv.kernels !== undefined) options.kernels = argv.kernels as "native" | "reference";
    if (argv["session-timeout"] !== undefined) options.sessionTimeoutSec = argv["session-timeout"];
    if (argv["max-body-mb"] !== undefined) options.maxBodyBytes = Math.round(argv["max-body-mb"] * 1024 * 1024);
    if (argv["long-poll"] !== undefined) options.longPollSec = argv["long-poll"];
    if (argv.models !== undefined)
      options.models = argv.models
        .split(",")
        .map((m) => m.trim())
        .filter((m) => m.length > 0);
    if (argv["max-lora-rank"] !== undefined) options.maxLoraRank = argv["max-lora-rank"];
    if (argv["topk-prompt-logprobs"] !== undefined) options.topkPromptLogprobs = argv["topk-prompt-logprobs"];
    // glibc keeps freed tensor memory unless told otherwise at process start (src/server/allocator.ts).
    const allocator = await import("../server/allocator.ts");
    if (allocator.needsAllocatorTuning()) {
      const code = await allocator.rerunWithAllocatorTuning();
      // The child printed its own messages; only its exit code (2 for usage errors) is left to pass on.
      if (code !== 0) process.exit(code);
      return;
    }
    // Loaded here so other commands do not pay for the engine's imports.
    const { startServer } = await import("../server/server.ts");
    let server;
    try {
      server = await startServer(options);
    } catch (err) {
      if (err instanceof ConfigurationError) throw new UsageError(err.message);
      throw err;
    }
    process.stdout.write(`cookbook serve: listening on ${server.url}${apiKey !== undefined ? " (X-API-Key required)" : ""}\n`);
    // stdout keeps its one line (callers read the port from it); the OpenAI base URL goes to stderr.
    process.stderr.write(`[serve] OpenAI API at ${server.url}/v1${apiKey !== undefined ? " (Authorization: Bearer <key>)" : ""}\n`);
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        process.stderr.write("[serve] shutting down\n");
        void server.close().then(resolve);
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
  },
});
