/**
 * The types of the tenant client: openapi-fetch's own method types, with one change: `error` may
 * also be a {@link ForbiddenError}, which the client returns in place of the body of a 403.
 *
 * @packageDocumentation
 */
import type { FetchResponse, MaybeOptionalInit, Middleware } from "openapi-fetch";
import type { ForbiddenError } from "./errors.js";

/** The HTTP methods of an OpenAPI path item, as openapi-fetch names them. */
export type HttpMethod = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";

/** A media type pattern, as openapi-fetch uses it to pick response content. */
export type MediaType = `${string}/${string}`;

/** The paths of `Paths` that have an operation for `Method`. */
export type PathsWithMethod<Paths, Method extends HttpMethod> = {
  [P in keyof Paths]: Paths[P] extends { [K in Method]: unknown } ? P : never;
}[keyof Paths];

type RequiredKeysOfHelper<T> = { [K in keyof T]: {} extends Pick<T, K> ? never : K }[keyof T];
type RequiredKeysOf<T> = RequiredKeysOfHelper<T> extends undefined ? never : RequiredKeysOfHelper<T>;

/** The init argument: optional when nothing in it is required (mirrors openapi-fetch). */
export type InitParam<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/**
 * A result of the tenant client: openapi-fetch's `{ data, error, response }`, where the error
 * branch also admits a {@link ForbiddenError} (returned for every 403).
 */
export type WithForbidden<R> = R extends { error: infer E; data?: never; response: Response }
  ? { data?: never; error: E | ForbiddenError; response: Response }
  : R;

/** The result of calling `Method` on `Path` with `Init`. */
export type TenantFetchResponse<Paths, Path extends keyof Paths, Method extends HttpMethod, Init, Media extends MediaType> =
  Paths[Path] extends Record<Method, Record<string | number, any>>
    ? WithForbidden<FetchResponse<Paths[Path][Method], Init, Media>>
    : never;

/** One HTTP method of the tenant client, e.g. `GET`. */
export type TenantClientMethod<Paths extends {}, Method extends HttpMethod, Media extends MediaType> = <
  Path extends PathsWithMethod<Paths, Method>,
  Init extends MaybeOptionalInit<Paths[Path], Method & keyof Paths[Path]>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<TenantFetchResponse<Paths, Path, Method, Init, Media>>;

/** `request(method, url, init)` of the tenant client. */
export type TenantClientRequestMethod<Paths extends {}, Media extends MediaType> = <
  Method extends HttpMethod,
  Path extends PathsWithMethod<Paths, Method>,
  Init extends MaybeOptionalInit<Paths[Path], Method & keyof Paths[Path]>,
>(
  method: Method,
  url: Path,
  ...init: InitParam<Init>
) => Promise<TenantFetchResponse<Paths, Path, Method, Init, Media>>;

/**
 * A typed client over `Paths`: the methods of openapi-fetch's `Client`, returning
 * `{ data, error, response }` and never throwing on an HTTP status.
 */
export interface TypedClient<Paths extends {}, Media extends MediaType = MediaType> {
  /** Call any method: `request("get", "/api/v1/auth/user")`. */
  request: TenantClientRequestMethod<Paths, Media>;
  /** Call a GET endpoint. */
  GET: TenantClientMethod<Paths, "get", Media>;
  /** Call a PUT endpoint. */
  PUT: TenantClientMethod<Paths, "put", Media>;
  /** Call a POST endpoint. */
  POST: TenantClientMethod<Paths, "post", Media>;
  /** Call a DELETE endpoint. */
  DELETE: TenantClientMethod<Paths, "delete", Media>;
  /** Call an OPTIONS endpoint. */
  OPTIONS: TenantClientMethod<Paths, "options", Media>;
  /** Call a HEAD endpoint. */
  HEAD: TenantClientMethod<Paths, "head", Media>;
  /** Call a PATCH endpoint. */
  PATCH: TenantClientMethod<Paths, "patch", Media>;
  /** Call a TRACE endpoint. */
  TRACE: TenantClientMethod<Paths, "trace", Media>;
  /** Register more middleware; it runs after the built-in ones on requests, before them on responses. */
  use(...middleware: Middleware[]): void;
  /** Unregister middleware registered with `use`. */
  eject(...middleware: Middleware[]): void;
}

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
