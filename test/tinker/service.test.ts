import { test } from "node:test";
import assert from "node:assert/strict";
import { chooseEngine, createServiceClient } from "../../src/service.ts";
import { HttpServiceClient } from "../../src/tinker/http/serviceClient.ts";
import { DEFAULT_BASE_URL } from "../../src/tinker/http/options.ts";
import { ConfigurationError } from "../../src/tinker/errors.ts";

test("engine choice: URL or API key → remote; nothing or 'local' → embedded", () => {
  assert.deepEqual(chooseEngine({ env: {} }), { kind: "embedded" });
  assert.deepEqual(chooseEngine({ baseUrl: "local", apiKey: "tml-x", env: {} }), { kind: "embedded" });
  assert.deepEqual(chooseEngine({ baseUrl: "http://127.0.0.1:8000", env: {} }), { kind: "remote", baseUrl: "http://127.0.0.1:8000" });
  assert.deepEqual(chooseEngine({ apiKey: "tml-x", env: {} }), { kind: "remote", baseUrl: undefined });
  assert.deepEqual(chooseEngine({ env: { TINKER_API_KEY: "tml-x" } }), { kind: "remote", baseUrl: undefined });
  assert.deepEqual(chooseEngine({ env: { TINKER_BASE_URL: "https://h.example" } }), { kind: "remote", baseUrl: "https://h.example" });
  assert.deepEqual(chooseEngine({ env: { TINKER_BASE_URL: "local", TINKER_API_KEY: "tml-x" } }), { kind: "embedded" });
  assert.throws(
    () => chooseEngine({ baseUrl: "ftp://x", env: {} }),
    (e: unknown) => e instanceof ConfigurationError && /expected "local" or an http\(s\):\/\/ URL/.test(e.message),
  );
});

test("createServiceClient returns the HTTP client with the right base URL", async () => {
  const a = await createServiceClient({ baseUrl: "http://127.0.0.1:8000/", env: {} });
  assert.ok(a instanceof HttpServiceClient);
  assert.equal(a.engineKind, "remote");
  assert.equal((a as HttpServiceClient).ctx.opts.baseUrl, "http://127.0.0.1:8000");
  await a.close();
  const b = await createServiceClient({ apiKey: "tml-x", env: {} });
  assert.equal((b as HttpServiceClient).ctx.opts.baseUrl, DEFAULT_BASE_URL);
  assert.equal((b as HttpServiceClient).ctx.opts.apiKey, "tml-x");
  await b.close();
});
