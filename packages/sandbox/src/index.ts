/**
 * A stateful tenant of the Tenant Integration Service for development and tests, in memory or
 * (with `startSandbox({ stateFile })`) kept in a file across restarts.
 *
 * `createSandbox` is runtime-neutral (web APIs only); `startSandbox` serves it on Node.
 *
 * @packageDocumentation
 */
export { createSandbox, type FetchLike, type Sandbox, type SandboxOptions } from "./app.js";
export { startSandbox, type RunningSandbox, type StartOptions } from "./start.js";
export {
  ClientConfigError,
  ClientRegistry,
  parseClientSpec,
  validateClient,
  type ClientRegistration,
} from "./clients.js";
export { createClock, MAX_ADVANCE_SECONDS, type Clock, type ClockOptions } from "./clock.js";
export { CODE_LIFETIME_SECONDS } from "./codes.js";
export {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  MAX_ROTATION_GRACE_SECONDS,
  REFRESH_TOKEN_LIFETIME_SECONDS,
  type IssuedTokens,
} from "./tokens.js";
export { HostConfigError, isLoopbackHostname } from "./hosts.js";
export { StateFileError, type StateFileErrorCode } from "./tenant-state-file.js";
export { EVENT_RETENTION_SECONDS, MAX_EVENTS, type SandboxEvent } from "./events.js";
export { USER_SCOPE } from "./routes/user.js";
export {
  DEMO_USER,
  DEMO_USERS,
  demoUsers,
  MAX_USERS,
  USER_PARAMETER,
  UserConfigError,
  type UserId,
  type UserRecord,
} from "./users.js";
export { CONSENT_PATH } from "./routes/authorize.js";
export { CLOCK_PATH, EVENTS_PATH, FAULTS_PATH, LEDGER_PATH, REQUESTS_PATH, USERS_PATH } from "./routes/admin.js";
export type { SandboxRequest } from "./requests.js";
export {
  ACTOR_HEADER,
  actorOf,
  MAX_ACTOR_LENGTH,
  refreshTokenFingerprint,
  type FamilyRevokedBy,
  type LedgerFamily,
  type LedgerPresentation,
  type LedgerRefreshToken,
  type LedgerReuse,
  type LedgerView,
  type SandboxLedger,
} from "./ledger.js";
export {
  FaultConfigError,
  Faults,
  MAX_FAULT_COUNT,
  MAX_FAULT_DELAY_MS,
  MAX_FAULTS,
  MAX_RETRY_AFTER_SECONDS,
  type Fault,
  type FaultKind,
  type FaultSpec,
} from "./faults.js";
export { parseConfig, type SandboxConfig } from "./config.js";
