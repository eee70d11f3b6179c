// `cookbook download <tinker path> [--output DIR]`: fetches a checkpoint's archive from the
// Tinker service in TINKER_BASE_URL (the hosted service, or `cookbook serve`) and unpacks it.
import { UsageError } from "../config/errors.ts";
import { InvalidArgumentError } from "../tinker/errors.ts";
import { parseTinkerPath } from "../tinker/paths.ts";
import { defineCommand } from "./types.ts";

interface DownloadArgs {
  path: string;
  output?: string;
  force?: boolean;
  "base-url"?: string;
}

export const downloadCommand = defineCommand<DownloadArgs>({
  builder: (y) =>
    y
      .positional("path", { type: "string", demandOption: true, describe: "tinker:// path of the checkpoint" })
      .option("output", { alias: "o", type: "string", describe: "Folder to unpack into (default ./<run>-<kind>-<name>)" })
      .option("force", { type: "boolean", describe: "Replace the output folder if it exists" })
      .option("base-url", {
        type: "string",
        describe: "Service URL (default $TINKER_BASE_URL, then the hosted service); the API key comes from $TINKER_API_KEY",
      }),
  handler: async (argv) => {
    let p;
    try {
      p = parseTinkerPath(argv.path);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { HttpServiceClient } = await import("../tinker/http/serviceClient.ts");
    const { downloadCheckpoint } = await import("../tinker/http/download.ts");
    const service = new HttpServiceClient(argv["base-url"] !== undefined ? { baseUrl: argv["base-url"] } : {});
    const output = argv.output ?? `${p.modelId.replace(/[:/]/g, "_")}-${p.kind}-${p.name}`;
    try {
      const r = await downloadCheckpoint(service.createRestClient(), argv.path, output, { overwrite: argv.force === true });
      process.stdout.write(`${argv.path} → ${r.dir} (${(r.bytes / 1024 / 1024).toFixed(1)} MiB archive)\n`);
    } catch (err) {
      if (err instanceof InvalidArgumentError) throw new UsageError(err.message);
      throw err;
    } finally {
      await service.close();
    }
  },
});
