import { z } from "zod";
import { adapterFields, runFields } from "../../src/training/config.ts";

/** The run fields every loop has, parsed with their defaults. */
export const TrainingRunConfigFields = z.object({ ...runFields, ...adapterFields });
