/**
 * A stateful, in-memory tenant of the Tenant Integration Service for development and tests.
 *
 * `createSandbox` is runtime-neutral (web APIs only); `startSandbox` serves it on Node.
 *
 * @packageDocumentation
 */
export { createSandbox, type FetchLike, type Sandbox, type SandboxOptions } from "./app.js";
export { startSandbox, type RunningSandbox, type StartOptions } from "./start.js";
export { ClientConfigError, ClientRegistry, parseClientSpec, validateClient, type ClientRegistration } from "./clients.js";
export { createClock, MAX_ADVANCE_SECONDS, type Clock } from "./clock.js";
export { CODE_LIFETIME_SECONDS } from "./codes.js";
export { ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_SECONDS, type IssuedTokens } from "./tokens.js";
export { MAX_EVENTS, type SandboxEvent } from "./events.js";
export { DEMO_USER, USER_SCOPE } from "./routes/user.js";
export { CONSENT_PATH } from "./routes/authorize.js";
export { CLOCK_PATH, EVENTS_PATH } from "./routes/admin.js";
export { parseConfig, type SandboxConfig } from "./config.js";
