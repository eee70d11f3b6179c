// Error classes of the Tinker API layer. Every engine throws these so callers can tell a failed
// request (the server ran it and it failed) from a transport problem or a bad argument.

/** Base class of every error this layer throws. */
export class TinkerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A caller passed something the API cannot accept (bad shape, bad path, bad option). */
export class InvalidArgumentError extends TinkerError {}

/** A request was accepted but failed while running (`{error, category}` inside a future). */
export class RequestFailedError extends TinkerError {
  readonly requestId: string;
  /** "user" (fix the input), "server", or "unknown". */
  readonly category: string;
  constructor(message: string, requestId: string, category: string) {
    super(`request ${requestId} failed (${category}): ${message}`);
    this.requestId = requestId;
    this.category = category;
  }
}

/** The server answered with a non-success HTTP status that is not retried. */
export class APIStatusError extends TinkerError {
  readonly status: number;
  /** The response body: parsed JSON when it was JSON, else the raw text. */
  readonly body: unknown;
  constructor(message: string, status: number, body: unknown) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** The server could not be reached (or kept dropping the connection) within the retry budget. */
export class APIConnectionError extends TinkerError {}

/** `TinkerFuture.result(timeoutMs)` ran out of time; the request itself keeps running. */
export class TimeoutError extends TinkerError {}

/** The configuration (base URL, engine choice, environment) cannot work as given. */
export class ConfigurationError extends TinkerError {}

/** The server lacks something the caller needs (a model, a LoRA rank, an option); found before any work. */
export class UnsupportedByServerError extends ConfigurationError {}
