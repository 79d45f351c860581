/**
 * The types of the tenant client: openapi-fetch's own method types, over the contract's paths with
 * two changes ({@link TenantPaths}): every error response is typed as the error class the client
 * returns for it, and the user record is {@link TenantUser}, which integrators may augment.
 *
 * @packageDocumentation
 */
import type { Client } from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import type { ForbiddenError, HttpError, RateLimitError, ServerError, UnauthorizedError } from "./errors.js";
import type { TenantUser } from "./index.js";

/** The HTTP methods of an OpenAPI path item, as openapi-fetch names them. */
export type HttpMethod = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";

/** A media type pattern, as openapi-fetch uses it to pick response content. */
export type MediaType = `${string}/${string}`;

/** A response key as text: `403` and `"403"` alike, `"5XX"`, `"default"`. */
type StatusText<Status> = `${Status & (string | number)}`;

/** Whether a response key of an operation is an error status (4xx, 5xx or `default`), as openapi-fetch counts them. */
type IsErrorStatus<Status> = StatusText<Status> extends `4${string}` | `5${string}` | "default" ? true : false;

/**
 * The error class the client returns for a status: {@link UnauthorizedError} for 401,
 * {@link ForbiddenError} (or its subclass `InsufficientScopeError`) for 403, {@link RateLimitError}
 * for 429, {@link ServerError} for 5xx, else {@link HttpError}; `Body` is the contract's body type.
 *
 * @example
 * ```ts
 * type E = HttpErrorFor<403, ApiError>; // ForbiddenError<ApiError>
 * ```
 * @see RFC 9110 §15 (status codes)
 */
export type HttpErrorFor<Status, Body> =
  StatusText<Status> extends "401"
    ? UnauthorizedError<Body>
    : StatusText<Status> extends "403"
      ? ForbiddenError<Body>
      : StatusText<Status> extends "429"
        ? RateLimitError<Body>
        : StatusText<Status> extends `5${string}`
          ? ServerError<Body>
          : HttpError<Body>;

/** An error response object with its content replaced by the error class (the body is kept as `body`). */
type ErrorResponseObject<Status, R> = R extends { content: infer C }
  ? { [K in keyof R]: K extends "content" ? { [M in keyof C]: HttpErrorFor<Status, C[M]> } : R[K] }
  : { [K in keyof R]: R[K] } & { content: { "*/*": HttpErrorFor<Status, undefined> } };

/**
 * The responses of an operation as the client returns them: each error response typed as its
 * error class, plus a `default` {@link HttpError} for every status the contract does not list (a
 * 429, a 5xx, a 3xx left unfollowed), since the client returns those as `error` too.
 */
export type TenantResponses<Responses> = {
  [S in keyof Responses]: IsErrorStatus<S> extends true ? ErrorResponseObject<S, Responses[S]> : Responses[S];
} & ("default" extends keyof Responses
  ? {}
  : { default: { headers: { [name: string]: unknown }; content: { "*/*": HttpError<unknown> } } });

/** An operation with {@link TenantResponses}. */
export type TenantOperation<Operation> = {
  [K in keyof Operation]: K extends "responses" ? TenantResponses<Operation[K]> : Operation[K];
};

/** Every operation of `Paths` with {@link TenantResponses}. */
export type WithErrorClasses<Paths> = {
  [P in keyof Paths]: { [K in keyof Paths[P]]: K extends HttpMethod ? TenantOperation<Paths[P][K]> : Paths[P][K] };
};

type UserPath = paths["/api/v1/auth/user"];
type UserOperation = UserPath["get"];

/** The contract's paths with the user record typed as {@link TenantUser}. */
type PathsWithTenantUser = Omit<paths, "/api/v1/auth/user"> & {
  "/api/v1/auth/user": Omit<UserPath, "get"> & {
    get: Omit<UserOperation, "responses"> & {
      responses: Omit<UserOperation["responses"], 200> & {
        200: Omit<UserOperation["responses"][200], "content"> & { content: { "application/json": TenantUser } };
      };
    };
  };
};

/**
 * The paths of the tenant client: the contract's `paths` with error responses typed as the
 * client's error classes and the user record as {@link TenantUser}. `TenantClient` is an
 * openapi-fetch `Client<TenantPaths>`, so helpers built on openapi-fetch (openapi-react-query's
 * `createQueryHooks`) accept it.
 *
 * @example
 * ```ts
 * import createQueryHooks from "openapi-react-query";
 * const hooks = createQueryHooks<TenantPaths>(client); // the same as createQueryHooks(client)
 * ```
 * @see https://openapi-ts.dev/openapi-fetch/api#createclient
 */
export type TenantPaths = WithErrorClasses<PathsWithTenantUser>;

/**
 * A typed client over `Paths`: openapi-fetch's own `Client`, returning `{ data, error, response }`
 * and never throwing on an HTTP status. Over {@link TenantPaths}, `error` is the error class of the
 * status (as openapi-fetch's `Readable` copy of its type: same fields; `instanceof` narrows it).
 * Per request it also takes `timeout` (a limit made by `timeoutAfter`, or `false` for none).
 */
export type TypedClient<Paths extends {}> = Client<Paths, MediaType>;

/** An operation of an `/api/v1` route the contract does not list yet: anything goes, JSON in and out. */
export interface RawOperation {
  parameters: {
    query?: Record<string, unknown>;
    header?: Record<string, unknown>;
    path?: Record<string, unknown>;
    cookie?: Record<string, unknown>;
  };
  requestBody?: { content: { "application/json": unknown } };
  responses: {
    "2XX": { content: { "application/json": unknown } };
    default: { content: { "application/json": unknown } };
  };
}

/** The path map of the escape hatch: every path under `/api/v1/`, every method, untyped JSON. */
export type RawPaths = {
  [P in `/api/v1/${string}`]: { [M in HttpMethod]: RawOperation } & { parameters: RawOperation["parameters"] };
};
