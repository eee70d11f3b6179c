// Config plumbing: recipe type, zod schema walk, key=value parsing and help text.
export { ConfigError, UsageError } from "./errors.ts";
export { type ConfigField, type FieldKind, describeType, listConfigFields, listObjectPaths, unwrapSchema } from "./fields.ts";
export { formatConfigHelp, formatDefault, groupConfigFields } from "./help.ts";
export { coerceFieldValue, getConfigValue, parseConfigArgs, splitAssignment, validateConfig } from "./parse.ts";
export { type Recipe, type RecipeContext, type RecipeEntry, type RecipeModule, defineRecipe, loadRecipe } from "./recipe.ts";
export { closestMatches, editDistance } from "./suggest.ts";
export { LogDirBehaviorSchema, LrScheduleSchema, type LogDirBehavior, type LrSchedule } from "./common.ts";
export { COLLAPSED_FIELD_GROUPS, DEFAULT_FIELD_GROUP, FIELD_GROUPS, FIELD_GROUP_TITLES, type FieldGroup, groupTag, inGroup, tagGroup } from "./groups.ts";
