// The Tinker-protocol HTTP server over the embedded engine (`cookbook serve`).
export { startServer, type RunningServer } from "./server.ts";
export { ServeOptionsSchema, type ServeHooks, type ServeOptions } from "./options.ts";
export { CLIENT_FLAGS } from "./routes/session.ts";
