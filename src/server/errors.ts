// How engine errors become HTTP answers (synchronous endpoints) or future failures (queued ones).
import { ZodError } from "zod";
import { ModelNotFoundError } from "../engine/index.ts";
import { APIStatusError, InvalidArgumentError, TinkerError } from "../tinker/errors.ts";
import { HttpError } from "./http.ts";

/** "user" when the request itself was wrong (fix the input), "server" otherwise. */
export function errorCategory(err: unknown): "user" | "server" {
  if (err instanceof HttpError) return err.status < 500 ? "user" : "server";
  if (err instanceof APIStatusError) return err.status < 500 ? "user" : "server";
  if (err instanceof InvalidArgumentError || err instanceof ModelNotFoundError || err instanceof ZodError) return "user";
  if (err instanceof TinkerError) return "user";
  return "server";
}

export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof APIStatusError) return new HttpError(err.status, message);
  if (err instanceof ModelNotFoundError) return new HttpError(404, message);
  if (err instanceof ZodError) return new HttpError(422, zodDetail(err));
  // Other TinkerErrors (bad arguments, unsupported features) are the caller's to fix: a 4xx, which
  // clients do not retry, where a 5xx would be retried for minutes.
  if (err instanceof TinkerError) return new HttpError(400, message);
  return new HttpError(500, `internal error: ${message}`);
}

export function zodDetail(err: ZodError): string {
  return err.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
}
