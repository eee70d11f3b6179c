#!/usr/bin/env node
// The `cookbook` command: registers tsx so the TypeScript sources run as they are, then hands over
// to the command line in src/cli.ts.
import { register } from "tsx/esm/api";
register();
await import("../src/cli.ts");
