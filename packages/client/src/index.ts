/**
 * The typed fetch client of the Tenant Integration Service API: openapi-fetch over the contract's
 * types, with pluggable auth (any {@link AccessTokenSource}), bearer scoping, a one-time retry after 401,
 * opt-in retries of 429/5xx and failed connections ({@link retryPolicy}), opt-in timeouts ({@link timeoutAfter}), opt-in logging
 * ({@link logTo}), one error class per status, and an escape hatch for unlisted `/api/v1` routes.
 *
 * @packageDocumentation
 */
export { createTenantClient, type TenantClient, type TenantClientOptions } from "./create-tenant-client.js";
export { staticToken, type AccessTokenSource } from "./access-token-source.js";
export { sessionClient, type SessionClientOptions, type SessionSource } from "./session-client.js";
export type { FetchLike } from "@tenant-integration/internal";
export { logTo, type ClientLogger, type Logger, type LogLevel, type LogEvent } from "./logger.js";
export { bearerMiddleware, type BearerMiddlewareOptions } from "./middleware/bearer.js";
export {
  unauthorizedRetryMiddleware,
  type UnauthorizedRetryMiddlewareOptions,
} from "./middleware/unauthorized-retry.js";
export {
  retryMiddleware,
  retryPolicy,
  type RetryInfo,
  type RetryOptions,
  type RetryPolicy,
} from "./middleware/retry.js";
export { timeoutAfter, type CallTimeout } from "./timeout.js";
export { networkErrorMiddleware } from "./middleware/network-error.js";
export {
  TenantClientError,
  HttpError,
  UnauthorizedError,
  ForbiddenError,
  InsufficientScopeError,
  RateLimitError,
  ServerError,
  NetworkError,
  TimeoutError,
  PathOutsideApiError,
  type HttpErrorInit,
  type RequestLine,
  type TenantClientErrorCode,
  type ScopeName,
} from "./errors.js";
export type {
  TypedClient,
  TenantPaths,
  WithErrorClasses,
  TenantResponses,
  TenantOperation,
  HttpErrorFor,
  RawPaths,
  RawOperation,
  HttpMethod,
  MediaType,
} from "./client-types.js";
/** The contract's types, re-exported so that users need not add `@tenant-integration/types` themselves. */
export type { paths, components, operations, Scope, User, ApiError, OAuthError } from "@tenant-integration/types";

/**
 * The authenticated user, as `GET /api/v1/auth/user` returns it. The service does not document its
 * fields, so by default it is an open record whose fields read as `unknown`. Declare the fields
 * your integration relies on by augmenting this interface; the contract stays as it is:
 *
 * @example
 * ```ts
 * declare module "@tenant-integration/client" {
 *   interface TenantUser {
 *     name: string;
 *     email: string;
 *   }
 * }
 * const { data } = await client.GET("/api/v1/auth/user");
 * data?.name; // string
 * ```
 * @see https://www.typescriptlang.org/docs/handbook/declaration-merging.html#module-augmentation
 */
export interface TenantUser {
  [field: string]: unknown;
}
