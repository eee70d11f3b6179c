// logs.log: the human-readable log of a run. The first line of each launch records its command line.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { appendLine } from "../files/durable.ts";

export type LogLevel = "INFO" | "WARNING" | "ERROR";

export class RunLog {
  readonly path: string;
  /** Where the run is ("after step 12"), named when an entry cannot be written (a full disk). */
  progress: () => string | undefined = () => undefined;

  constructor(
    logDir: string,
    commandLine: string,
    private readonly echo: { write(text: string): unknown } | false = false,
  ) {
    mkdirSync(logDir, { recursive: true });
    this.path = join(logDir, "logs.log");
    this.write("INFO", `command: ${commandLine}`);
  }

  info(message: string): void {
    this.write("INFO", message);
  }
  warn(message: string): void {
    this.write("WARNING", message);
  }
  error(message: string): void {
    this.write("ERROR", message);
  }

  private write(level: LogLevel, message: string): void {
    // One write per entry: multi-line messages stay one record.
    const line = `${new Date().toISOString()} [${level}] ${message}\n`;
    const where = this.progress();
    appendLine(this.path, line, { repair: "text", context: `the run's log${where ? `, ${where}` : ""}` });
    if (this.echo) this.echo.write(line);
  }
}
