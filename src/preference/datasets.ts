// Where labeled comparisons come from: the shipped synthetic sets, a JSONL file of cookbook rows,
// a parquet file or folder, or a Hugging Face hub dataset (the cookbook's hhh / helpsteer3 /
// ultrafeedback). Every source gives a train list and an optional held-out list.
import { PROJECT_ROOT } from "../projectRoot.ts";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parquetReadObjects } from "hyparquet";
import { z } from "zod";
import { inGroup } from "../config/groups.ts";
import { seededShuffle } from "../data/shuffle.ts";
import { resolveDatasetSplitFiles, type HubOptions } from "../hf/datasets.ts";
import { DataFormatError } from "../supervised/conversationFile.ts";
import { readComparisonFile } from "./comparisonFile.ts";
import { detectRowFormat, ROW_PARSERS } from "./hubRows.ts";
import type { LabeledComparison } from "./types.ts";

export const FIXTURE_DATA_DIR = path.join(PROJECT_ROOT, "fixtures", "data");

/** The shipped synthetic sets (fixtures/data/prefs_<name>_{train,test}.jsonl, made by scripts/makeComparisonFixtures.ts). */
export const SYNTHETIC_SETS = ["pirate", "concise", "arithmetic"] as const;
export type SyntheticSet = (typeof SYNTHETIC_SETS)[number];

interface HubPreset {
  path: string;
  name: string | null;
  split: string;
  testSplit: string | null;
}

/** The cookbook's dataset names for its DPO / reward-model recipes. */
export const HUB_PRESETS: Record<string, HubPreset> = {
  hhh: { path: "Anthropic/hh-rlhf", name: null, split: "train", testSplit: "test" },
  helpsteer3: { path: "nvidia/HelpSteer3", name: "preference", split: "train", testSplit: "validation" },
  ultrafeedback: { path: "argilla/ultrafeedback-binarized-preferences", name: null, split: "train", testSplit: null },
};

/** Config fields of a comparison source, spread into recipe schemas. */
export const comparisonSourceFields = inGroup("data", {
  dataset: z
    .string()
    .default("pirate")
    .describe(
      `Comparisons: ${SYNTHETIC_SETS.join(" | ")} (shipped synthetic sets), hhh | helpsteer3 | ultrafeedback (hub), a .jsonl of cookbook rows, a parquet file/folder, or a hub id`,
    ),
  dataset_config: z.string().nullable().default(null).describe("Hub/parquet: configuration (subset) name"),
  test_dataset: z
    .string()
    .nullable()
    .default(null)
    .describe("Held-out comparisons (.jsonl or parquet); default: the source's own test split, else test_size rows of train"),
  test_size: z.number().int().min(0).default(64).describe("Held-out comparisons (taken from train when the source has no test split)"),
  max_train: z.number().int().positive().nullable().default(null).describe("Use at most this many training comparisons"),
  shuffle_seed: z.number().int().default(0).describe("Seed of the train/test shuffle"),
});
const ComparisonSourceSchema = z.object(comparisonSourceFields);
export type ComparisonSourceConfig = z.output<typeof ComparisonSourceSchema>;

export interface ComparisonSplits {
  train: LabeledComparison[];
  test: LabeledComparison[] | null;
}

/** Every row of some parquet files as labeled comparisons (format told by the columns); skipped rows dropped. */
export async function readParquetComparisons(files: readonly string[]): Promise<LabeledComparison[]> {
  const out: LabeledComparison[] = [];
  for (const file of files) {
    const buf = readFileSync(file);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) });
    } catch (err) {
      throw new DataFormatError(`${file}: cannot read as parquet: ${(err as Error).message}`);
    }
    if (rows.length === 0) continue;
    const parse = ROW_PARSERS[detectRowFormat(Object.keys(rows[0]!), file)];
    rows.forEach((row, i) => {
      const lc = parse(row, `${file} row ${i}`);
      if (lc !== null) out.push(lc);
    });
  }
  return out;
}

async function readLocal(p: string, options: { name: string | null; split: string; hub?: HubOptions }): Promise<LabeledComparison[]> {
  if (p.endsWith(".jsonl")) return readComparisonFile(p);
  const files = await resolveDatasetSplitFiles({ path: p, name: options.name, split: options.split }, options.hub);
  return readParquetComparisons(files);
}

function holdOut(all: LabeledComparison[], config: ComparisonSourceConfig): ComparisonSplits {
  const shuffled = seededShuffle(all, config.shuffle_seed);
  const n = Math.min(config.test_size, Math.floor(shuffled.length / 2));
  return { test: n > 0 ? shuffled.slice(0, n) : null, train: shuffled.slice(n) };
}

function limit(splits: ComparisonSplits, config: ComparisonSourceConfig): ComparisonSplits {
  const train = config.max_train !== null ? splits.train.slice(0, config.max_train) : splits.train;
  const test = splits.test !== null && config.test_size > 0 ? splits.test.slice(0, config.test_size) : null;
  if (train.length === 0) throw new DataFormatError(`dataset ${config.dataset}: no usable training comparisons (ties and malformed rows are skipped)`);
  return { train, test };
}

/** The train and held-out comparisons a source config names. */
export async function loadComparisons(config: ComparisonSourceConfig, hub?: HubOptions): Promise<ComparisonSplits> {
  const d = config.dataset;
  const explicitTest = async (): Promise<LabeledComparison[] | null> =>
    config.test_dataset === null ? null : readLocal(config.test_dataset, { name: config.dataset_config, split: "test", ...(hub !== undefined ? { hub } : {}) });
  if ((SYNTHETIC_SETS as readonly string[]).includes(d)) {
    const train = readComparisonFile(path.join(FIXTURE_DATA_DIR, `prefs_${d}_train.jsonl`));
    const test = (await explicitTest()) ?? readComparisonFile(path.join(FIXTURE_DATA_DIR, `prefs_${d}_test.jsonl`));
    return limit({ train: seededShuffle(train, config.shuffle_seed), test }, config);
  }
  const preset = HUB_PRESETS[d];
  if (preset !== undefined) {
    const ref = (split: string) => ({ path: preset.path, name: config.dataset_config ?? preset.name, split });
    const all = await readParquetComparisons(await resolveDatasetSplitFiles(ref(preset.split), hub));
    const test =
      (await explicitTest()) ?? (preset.testSplit !== null ? await readParquetComparisons(await resolveDatasetSplitFiles(ref(preset.testSplit), hub)) : null);
    if (test === null) return limit(holdOut(all, config), config);
    return limit({ train: seededShuffle(all, config.shuffle_seed), test: seededShuffle(test, config.shuffle_seed) }, config);
  }
  // A .jsonl file, else parquet: a local file or folder, or a hub id (resolved like every HF dataset).
  const all = await readLocal(d, { name: config.dataset_config, split: "train", ...(hub !== undefined ? { hub } : {}) });
  const test = await explicitTest();
  if (test === null) return limit(holdOut(all, config), config);
  return limit({ train: seededShuffle(all, config.shuffle_seed), test }, config);
}
