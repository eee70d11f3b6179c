// Errors the command line maps to exit codes: a UsageError is the user's input being wrong
// (exit 2), anything else is a failure of the run itself (exit 1).

export class UsageError extends Error {
  override name = "UsageError";
}

/** A key=value argument or a config value that does not fit the recipe's schema. */
export class ConfigError extends UsageError {
  override name = "ConfigError";
}
