// Where the files the project ships live (fixtures/ at the repository root), so recipes can name
// their offline defaults without each computing the path from its own location.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures");

/** A file of fixtures/data/ (the synthetic datasets made by scripts/makeFixtures.ts). */
export function fixtureDataPath(name: string): string {
  return join(FIXTURES_DIR, "data", name);
}
