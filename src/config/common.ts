// Config fields shared by many recipes, so they read and validate the same everywhere.
import { z } from "zod";

export const LogDirBehaviorSchema = z.enum(["delete", "resume", "ask", "raise"]);
export type LogDirBehavior = z.infer<typeof LogDirBehaviorSchema>;

export const LrScheduleSchema = z.enum(["linear", "cosine", "constant"]);
export type LrSchedule = z.infer<typeof LrScheduleSchema>;
