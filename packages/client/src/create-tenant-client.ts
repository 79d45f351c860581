import createClient, { defaultBodySerializer, type Middleware } from "openapi-fetch";
import type { AccessTokenSource } from "./access-token-source.js";
import { apiPrefix, inScope } from "./base-url.js";
import type { HttpMethod, RawPaths, TenantPaths, TypedClient, WithErrorClasses } from "./client-types.js";
import { httpErrorFrom, PathOutsideApiError, TenantClientError } from "./errors.js";
import type { FetchLike } from "@tenant-integration/internal";
import type { ClientLogger } from "./logger.js";
import { coreMiddleware, keepingBody, tokensSentFor } from "./middleware/core.js";
import type { RetryInfo, RetryPolicy } from "./middleware/retry.js";
import type { CallTimeout } from "./timeout.js";

/** Options of {@link createTenantClient}. */
export interface TenantClientOptions {
  /**
   * The tenant's origin, e.g. `https://acme.tenant.example`. `https:` only; `http:` only on a
   * loopback host. No path (the client adds `/api/v1`), credentials, query or fragment (not even an
   * empty `?` or `#`). The token manager takes the same `baseUrl` by the same rule.
   */
  readonly baseUrl: string;
  /** Where bearer tokens come from: the token manager, {@link staticToken}, or any {@link AccessTokenSource}. */
  readonly auth: AccessTokenSource;
  /** The fetch to send requests with, shaped like the global one. Default `globalThis.fetch`. Tests inject one (or `sandbox.fetch`). */
  readonly fetch?: FetchLike;
  /**
   * Retries of 429, 5xx and failed connections on idempotent methods: a policy made by
   * {@link retryPolicy} (`retry: retryPolicy()` for 2 retries, 300 ms base delay, 10 s cap). Default:
   * none (`false` says so too). The retry code is imported only through `retryPolicy`.
   */
  readonly retry?: RetryPolicy | false;
  /** Called before each retry is waited for (attempt, status or error, delay, method and path), e.g. to count attempts. Overrides the policy's `onRetry`. */
  readonly onRetry?: (info: RetryInfo) => void;
  /**
   * The longest a call may take, retries included: a limit made by {@link timeoutAfter}, e.g.
   * `timeout: timeoutAfter(30_000)`. Default: none, as with `fetch` (the runtime's own limits still
   * apply: Node's fetch gives up on a server silent for 300 s). A call may pass its own `timeout`
   * (`false` for none). The timeout code is imported only through `timeoutAfter`.
   */
  readonly timeout?: CallTimeout | false;
  /**
   * Where to log requests, retries and refreshes: a logger made by {@link logTo}, e.g.
   * `logTo(console, "debug")`. Default: none. Never logs a token, a header value or a body. The
   * logging code is imported only through `logTo`.
   */
  readonly logger?: ClientLogger;
  /** Headers sent with every request, merged over the default `{ Accept: "application/json" }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** More middleware, as if passed to `client.use()`: it runs before the built-in one on requests, after it on responses. */
  readonly middleware?: readonly Middleware[];
}

/**
 * The tenant client: typed `GET`/`POST`/… for every operation of the contract, plus `raw` for
 * `/api/v1` routes the contract does not list yet. Structurally an openapi-fetch
 * `Client<TenantPaths>`, so openapi-fetch helpers (openapi-react-query) accept it.
 */
export interface TenantClient extends TypedClient<TenantPaths> {
  /**
   * The untyped escape hatch for `/api/v1/…` routes the contract does not list yet, with the same
   * auth, retries and error values. It rejects with {@link PathOutsideApiError}, sending nothing,
   * any URL that is not under `/api/v1` of the tenant after normalization.
   */
  readonly raw: TypedClient<WithErrorClasses<RawPaths>>;
  /** The validated base URL, normalized, without a trailing slash. */
  readonly baseUrl: string;
  /**
   * Registers more middleware, like the `middleware` option. It runs before the built-in middleware
   * on requests (so the built-in one sees the final URL and adds the token last) and after it on
   * responses (so it sees the response after retries and the refresh-and-retry; count retries with
   * `onRetry`).
   */
  use(...middleware: Middleware[]): void;
}

const METHODS = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"] as const;

/** The per-call options the wrapper reads before openapi-fetch sees the rest. */
interface CallInit {
  timeout?: unknown;
  signal?: AbortSignal | null;
  middleware?: Middleware[];
  [key: string]: unknown;
}

/**
 * Creates the typed client of one tenant: an openapi-fetch client over the contract's `paths` with
 * one built-in middleware that does, in one `onRequest`/`onResponse`/`onError`, what
 * {@link bearerMiddleware}, {@link retryMiddleware} (unless `retry: false`),
 * {@link unauthorizedRetryMiddleware} and {@link networkErrorMiddleware} do on their own (retries
 * only with a {@link retryPolicy}, logging only with {@link logTo}: an app that leaves them out does
 * not ship their code). Your
 * `middleware` (and `use`) run before it on requests and after it on responses.
 *
 * Results are openapi-fetch's `{ data, error, response }`; no HTTP status throws. Every non-2xx
 * answer comes back with `error` set to an {@link HttpError}: {@link UnauthorizedError} (401),
 * {@link ForbiddenError} / {@link InsufficientScopeError} (403), {@link RateLimitError} (429),
 * {@link ServerError} (5xx), else `HttpError` itself. Every request is sent with
 * `redirect: "manual"`: a 3xx comes back unfollowed (in browsers as an opaque response with status
 * 0), so no token, in a header or in an OAuth request's body, reaches another origin.
 *
 * @param options - see {@link TenantClientOptions}
 * @returns the client
 * @throws {@link TenantClientError} `INVALID_OPTIONS` when `baseUrl` is not acceptable (the message says why), for a `timeout` not made by `timeoutAfter`, or an `auth` without `getAccessToken`
 * @example
 * ```ts
 * const client = createTenantClient({ baseUrl: "https://acme.tenant.example", auth: staticToken(token), retry: retryPolicy(), timeout: timeoutAfter(30_000), logger: logTo(console) });
 * const { data, error } = await client.GET("/api/v1/auth/user");
 * if (error instanceof ForbiddenError) console.log("needs", error.requiredScope);
 * ```
 * @see RFC 6750 §2.1 (bearer header), §3 (challenges)
 * @see RFC 9110 §10.2.3 (Retry-After), §15 (status codes)
 * @see RFC 6749 §6 (refresh, behind `auth.onUnauthorized`)
 */
export function createTenantClient(options: TenantClientOptions): TenantClient {
  const { auth } = options;
  const prefix = apiPrefix(options.baseUrl);
  if (typeof auth?.getAccessToken !== "function")
    throw new TenantClientError("INVALID_OPTIONS", "Invalid auth: it needs a getAccessToken() method");
  const defaultTimeout = timeoutOf(options, "");
  const { logger: log, onRetry } = options;
  const retry = options.retry || undefined;
  const builtIn = coreMiddleware({
    prefix,
    auth,
    retry,
    onRetry,
    log,
    parts: { bearer: true, unauthorized: true, network: true },
  });
  const baseUrl = prefix.slice(0, -"/api/v1".length);

  const config = {
    baseUrl,
    headers: { Accept: "application/json", ...options.headers },
    // undefined: openapi-fetch defaults to globalThis.fetch
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    // Every request is created in manual redirect mode: no token follows a redirect, neither the
    // bearer token nor one in an OAuth request's body (fetch resends a body on 307 and 308), and
    // adding the bearer token costs no second Request. A call that asks for "follow" gets a manual
    // copy from the middleware when it carries the bearer token.
    redirect: "manual" as const,
  };
  // The built-in middleware goes last in every call, after the caller's middleware and the call's
  // own: it sees the final URL before it adds the token. openapi-fetch runs a call's own middleware
  // after the client's, hence two openapi-fetch clients over the same config:
  // - `client` has the caller's middleware and then the built-in one, for the calls that bring no
  //   middleware of their own (nearly all);
  // - `withCallMiddleware` has the caller's middleware only; its calls (those with their own
  //   middleware, and `raw`'s) pass the built-in one at the end of their list.
  // One client would do, with every call passing the built-in middleware in its list, but a call
  // that passes any option costs about 2 µs more in openapi-fetch on Node 20 (spreading the options
  // into a new object and taking them apart again leaves V8's fast path), some 12 % of a call.
  const client = createClient<RawPaths>(config);
  const withCallMiddleware = createClient<RawPaths>(config);
  client.use(...(options.middleware ?? []), builtIn);
  withCallMiddleware.use(...(options.middleware ?? []));
  // Whether middleware of the caller runs before the built-in one on every call: it may replace a
  // request and its body, so the body is then read before sending instead of kept as serialized.
  let callerMiddleware = (options.middleware?.length ?? 0) > 0;
  const use = (...middleware: Middleware[]): void => {
    if (middleware.length > 0) callerMiddleware = true;
    // openapi-fetch adds at the end: the built-in middleware is taken out and put back after them.
    client.eject(builtIn);
    client.use(...middleware, builtIn);
    withCallMiddleware.use(...middleware);
  };
  const eject = (...middleware: Middleware[]): void => {
    client.eject(...middleware);
    withCallMiddleware.eject(...middleware);
  };

  /** `client.raw` runs this first: nothing outside `/api/v1` of the tenant is sent. */
  const outsideApiGuard: Middleware = {
    onRequest({ request }) {
      if (!inScope(request.url, prefix)) throw new PathOutsideApiError(request.url);
    },
  };

  /**
   * One call: the timeout, openapi-fetch with the built-in middleware last, and the error value of a
   * non-2xx answer.
   */
  async function call(method: HttpMethod, url: string, init: CallInit | undefined, raw: boolean): Promise<unknown> {
    let callInit = init;
    let limit = defaultTimeout;
    if (init !== undefined && "timeout" in init) {
      limit = timeoutOf(init, " (per request)") ?? defaultTimeout;
      const { timeout: _, ...rest } = init;
      callInit = rest;
    }
    const signal = init?.signal;
    const running = limit ? limit.start(signal) : undefined;
    if (running) callInit = { ...callInit, signal: running.signal };
    // The serialized body is kept for a replay (after a 401, or a retry), unless middleware of the
    // caller may replace the request first.
    if (init?.body !== undefined && !callerMiddleware && !init.middleware?.length) {
      callInit = {
        ...callInit,
        bodySerializer: keepingBody(
          (init.bodySerializer as typeof defaultBodySerializer | undefined) ?? defaultBodySerializer,
        ),
      };
    }
    // `raw`'s guard, like the token, judges the URL after the call's own middleware
    const own = raw || (init?.middleware?.length ?? 0) > 0;
    if (own)
      callInit = { ...callInit, middleware: [...(init?.middleware ?? []), ...(raw ? [outsideApiGuard] : []), builtIn] };
    try {
      const result = await (own ? withCallMiddleware : client).request(
        method as "get",
        url as "/api/v1/{path}",
        callInit as never,
      );
      const { response } = result;
      if (response.ok) return result;
      return { error: httpErrorFrom(response, result.error, tokensSentFor.get(response) ?? [], Date.now()), response };
    } catch (failure) {
      throw running ? running.thrown(failure, { method: method.toUpperCase(), url: `${baseUrl}${url}` }) : failure;
    } finally {
      running?.stop();
    }
  }

  function typedClient(raw: boolean): TypedClient<RawPaths> {
    const methods: Record<string, unknown> = {
      request: (method: HttpMethod, url: string, init?: CallInit) => call(method, url, init, raw),
      // the client's middleware runs before each call's built-in one, so that sees the final request
      use,
      eject,
    };
    for (const method of METHODS) {
      const lowerCase = method.toLowerCase() as HttpMethod;
      methods[method] = (url: string, init?: CallInit) => call(lowerCase, url, init, raw);
    }
    return methods as unknown as TypedClient<RawPaths>;
  }

  const typed = typedClient(false) as unknown as TypedClient<TenantPaths>;
  return Object.assign(typed, {
    raw: typedClient(true) as unknown as TypedClient<WithErrorClasses<RawPaths>>,
    baseUrl,
  });
}

/**
 * The `timeout` of the client's options or of one call's: a limit made by `timeoutAfter`, or `false`
 * or nothing for none. (A number, as other fetch wrappers take, is refused rather than ignored.)
 *
 * @throws {@link TenantClientError} `INVALID_OPTIONS` naming the option (and `where`) otherwise
 */
function timeoutOf(holder: { timeout?: unknown }, where: string): CallTimeout | false | undefined {
  const { timeout } = holder;
  if (timeout === undefined || timeout === false || typeof (timeout as CallTimeout | null)?.start === "function")
    return timeout as CallTimeout | false | undefined;
  throw new TenantClientError("INVALID_OPTIONS", `Invalid timeout${where}: pass timeoutAfter(ms), or false`);
}
