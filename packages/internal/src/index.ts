/**
 * The rules the client (`@tenant-integration/client`) and the token manager
 * (`@tenant-integration/token-manager`) apply alike, written once: which `baseUrl` is a tenant origin,
 * how a secret is found and removed, the logger shape and levels, the `fetch` option's shape, and
 * `Retry-After`. Both packages depend on this one, so an app that uses both ships each rule once.
 *
 * Not for direct use: its exports serve those two packages, and change with them. What users meet
 * (`Logger`, `LogLevel`, `FetchLike`) both packages re-export.
 *
 * @see RFC 6750 §5.1 and §5.3, RFC 9110 §10.2.3
 * @packageDocumentation
 */
export { isLoopback, tenantOrigin } from "./base-url.js";
export type { FetchLike } from "./fetch-like.js";
export {
  isLogLevel,
  lineWriter,
  type LineLevel,
  type Logger,
  type LogLevel,
  type LogLine,
  type LogLines,
} from "./logger.js";
export {
  formsOf,
  MAX_DEPTH,
  MIN_SECRET_PREFIX,
  mentions,
  REDACTED,
  redact,
  redactText,
  sanitize,
  scrub,
  secretForms,
  TOO_DEEP,
} from "./redact.js";
export { parseRetryAfter } from "./retry-after.js";
