#!/usr/bin/env node
// The `cookbook` command: registers tsx so the TypeScript sources run as they are, then hands over
// to the command line in src/cli.ts. React's development build is several times slower at
// rendering the dashboard, so production is the default unless the user says otherwise.
process.env.NODE_ENV ??= "production";
const { register } = await import("tsx/esm/api");
register();
await import("../src/cli.ts");
