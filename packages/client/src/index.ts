/**
 * The typed fetch client of the Tenant Integration Service API: openapi-fetch over the contract's
 * types, with pluggable auth (any {@link AuthStrategy}), bearer scoping, a one-time retry after 401,
 * retries of 429/5xx, typed 403 and network errors, and an escape hatch for unlisted `/api/v1` routes.
 *
 * @packageDocumentation
 */
export { createTenantClient, type TenantClient, type TenantClientOptions } from "./create-tenant-client.js";
export { staticToken, type AuthStrategy } from "./auth-strategy.js";
export { bearerMiddleware, type BearerMiddlewareOptions } from "./middleware/bearer.js";
export { unauthorizedRetryMiddleware, type UnauthorizedRetryMiddlewareOptions } from "./middleware/unauthorized-retry.js";
export { retryMiddleware, type RetryOptions } from "./middleware/retry.js";
export { networkErrorMiddleware } from "./middleware/network-error.js";
export {
  TenantClientError,
  NetworkError,
  ForbiddenError,
  InsufficientScopeError,
  PathOutsideApiError,
  type TenantClientErrorCode,
  type ScopeName,
} from "./errors.js";
export type {
  TypedClient,
  RawPaths,
  RawOperation,
  WithForbidden,
  TenantFetchResponse,
  TenantClientMethod,
  TenantClientRequestMethod,
  HttpMethod,
  MediaType,
  PathsWithMethod,
  InitParam,
} from "./client-types.js";
