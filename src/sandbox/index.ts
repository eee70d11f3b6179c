export {
  DEFAULT_LIMITS,
  runSandboxed,
  type SandboxIsolation,
  type SandboxLanguage,
  type SandboxLimitHit,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxResult,
  type SandboxStatus,
} from "./run.ts";
export { sandboxCapabilities, type SandboxCapabilities } from "./capabilities.ts";
