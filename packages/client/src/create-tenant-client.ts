/**
 * The tenant client: `createTenantClient` builds one state object ({@link ClientState}, in
 * `client-state.ts`, which lists the modules) and binds to it the behaviours of the modules beside
 * this one: `call.ts` (its typed methods, one call, `use`/`eject` for the caller's middleware);
 * `send` is the fetch of its one openapi-fetch client.
 *
 * @see RFC 6750 §2.1, §3; RFC 9110 §10.2.3, §15; RFC 6749 §6
 */
import type { FetchLike } from "@tenant-integration/internal";
import createClient, { type Middleware } from "openapi-fetch";
import type { AccessTokenSource } from "./access-token-source.js";
import { apiPrefix } from "./base-url.js";
import { timeoutOf, typedClient } from "./call.js";
import { asFetch, bearerState, type ClientState, globalFetch } from "./client-state.js";
import type { RawPaths, TenantPaths, TypedClient, WithErrorClasses } from "./client-types.js";
import { TenantClientError } from "./errors.js";
import type { ClientLogger } from "./logger.js";
import type { RetryInfo, RetryPolicy } from "./middleware/retry.js";
import { send } from "./send.js";
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
  /**
   * More middleware, as if passed to `client.use()`: it runs before the client's own work (the
   * token, retries, the refresh-and-retry, which the client does as its `fetch`) on requests, after it
   * on responses and errors.
   */
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
   * Registers more middleware, like the `middleware` option. It runs before the client's own work on
   * requests (so the client sees the final URL and adds the token last) and after it on responses
   * (so it sees the response after retries and the refresh-and-retry; count retries with `onRetry`)
   * and on errors (its `onError` sees every failed send: the network, the token source, `raw`'s
   * refusal of a path outside the API).
   */
  use(...middleware: Middleware[]): void;
}

/**
 * Creates the typed client of one tenant: one openapi-fetch client over the contract's `paths`,
 * whose `fetch` does what {@link bearerMiddleware}, {@link retryMiddleware} (with a
 * {@link retryPolicy}), {@link unauthorizedRetryMiddleware} and {@link networkErrorMiddleware} do on
 * a plain client (retries only with a {@link retryPolicy}, logging only with {@link logTo}: an app
 * that leaves them out does not ship their code). Your `middleware` (and `use`, and a call's own)
 * runs before it on requests, so it sees the final URL, and after it on responses, so your middleware
 * sees the answer after retries and the refresh-and-retry, and a failed send, whatever failed (the
 * token source, the network, a path outside the API of `raw`), in `onError`.
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
  const state = createClientState(options);
  const typed = typedClient(state, false) as unknown as TypedClient<TenantPaths>;
  return Object.assign(typed, {
    raw: typedClient(state, true) as unknown as TypedClient<WithErrorClasses<RawPaths>>,
    baseUrl: state.baseUrl,
  });
}

/**
 * Checks the options and makes the state of a new client, with its one openapi-fetch client.
 *
 * @throws {@link TenantClientError} `INVALID_OPTIONS` for an invalid option, saying which.
 */
export function createClientState(options: TenantClientOptions): ClientState {
  const { auth } = options;
  const prefix = apiPrefix(options.baseUrl);
  if (typeof auth?.getAccessToken !== "function")
    throw new TenantClientError("INVALID_OPTIONS", "Invalid auth: it needs a getAccessToken() method");
  const baseUrl = prefix.slice(0, -"/api/v1".length);
  const openapi = createClient<RawPaths>({
    baseUrl,
    headers: { Accept: "application/json", ...options.headers },
    // Every request is created in manual redirect mode: no token follows a redirect, neither the
    // bearer token nor one in an OAuth request's body (fetch resends a body on 307 and 308), and
    // adding the bearer token costs no second Request. A request that a middleware puts in
    // "follow" mode gets a manual copy when it carries the bearer token.
    redirect: "manual",
    fetch: (request: Request) => send(state, undefined, request),
  });
  const middleware = options.middleware ?? [];
  openapi.use(...middleware);
  const state: ClientState = {
    baseUrl,
    prefix,
    bearer: bearerState(auth),
    retry: options.retry || undefined,
    onRetry: options.onRetry,
    log: options.logger,
    tokensSent: new WeakMap(),
    timeout: timeoutOf(options, ""),
    fetch: options.fetch === undefined ? globalFetch : asFetch(options.fetch),
    openapi,
    callerMiddleware: middleware.length > 0,
  };
  return state;
}
