// Where the files the project ships live (fixtures/ at the repository root), so recipes can name
// their offline defaults without each computing the path from its own location.
import { PROJECT_ROOT } from "../projectRoot.ts";
import { join, resolve } from "node:path";

export const FIXTURES_DIR = resolve(PROJECT_ROOT, "fixtures");

/** A file of fixtures/data/ (the synthetic datasets made by scripts/makeFixtures.ts). */
export function fixtureDataPath(name: string): string {
  return join(FIXTURES_DIR, "data", name);
}
