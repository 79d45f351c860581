import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import type { AuthStrategy } from "./auth-strategy.js";
import { apiPrefix, inScope } from "./base-url.js";
import type { RawPaths, TypedClient } from "./client-types.js";
import { ForbiddenError, InsufficientScopeError, PathOutsideApiError } from "./errors.js";
import { BEARER, coreMiddleware, NETWORK, UNAUTHORIZED } from "./middleware/core.js";
import type { RetryOptions } from "./middleware/retry.js";
import { bearerChallenge } from "./www-authenticate.js";

/** Options of {@link createTenantClient}. */
export interface TenantClientOptions {
  /**
   * The tenant's address, e.g. `https://acme.tenant.example`. `https:` only; `http:` only on a
   * loopback host. A path is allowed (the API is then under `<path>/api/v1`); credentials, a query
   * or a fragment are not.
   */
  readonly baseUrl: string;
  /** Where bearer tokens come from: the token manager, {@link staticToken}, or any {@link AuthStrategy}. */
  readonly auth: AuthStrategy;
  /** The fetch to send requests with. Default `globalThis.fetch`. Tests inject one. */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Retry policy for 429 and 5xx on idempotent methods, or `false` to turn retries off. Default: 2 retries, 300 ms base delay, 10 s cap. */
  readonly retry?: RetryOptions | false;
  /** Headers sent with every request, merged over the default `{ Accept: "application/json" }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** More middleware, as if passed to `client.use()`: it runs before the built-in one on requests, after it on responses. */
  readonly middleware?: readonly Middleware[];
}

/**
 * The tenant client: typed `GET`/`POST`/… for every operation of the contract, plus `raw` for
 * `/api/v1` routes the contract does not list yet.
 */
export interface TenantClient extends TypedClient<paths> {
  /**
   * The untyped escape hatch for `/api/v1/…` routes the contract does not list yet, with the same
   * auth, retries and error values. It rejects with {@link PathOutsideApiError}, sending nothing,
   * any URL that is not under `/api/v1` of the tenant after normalization.
   */
  readonly raw: TypedClient<RawPaths>;
  /** The validated base URL, normalized, without a trailing slash. */
  readonly baseUrl: string;
}

/**
 * Creates the typed client of one tenant: an openapi-fetch client over the contract's `paths` with
 * one built-in middleware that does, in one `onRequest`/`onResponse`/`onError`, what
 * {@link bearerMiddleware}, {@link retryMiddleware} (unless `retry: false`),
 * {@link unauthorizedRetryMiddleware} and {@link networkErrorMiddleware} do on their own. Your
 * `middleware` (and `use`) run before it on requests and after it on responses.
 *
 * Results are openapi-fetch's `{ data, error, response }`; no HTTP status throws. A 403 comes back
 * with `error` set to a {@link ForbiddenError} (or {@link InsufficientScopeError}) naming the scope
 * the route requires. Requests that carry the token are sent with `redirect: "manual"`: a 3xx
 * comes back unfollowed (in browsers as an opaque response with status 0), so the token never
 * reaches another origin.
 *
 * @param options - see {@link TenantClientOptions}
 * @returns the client
 * @throws {@link TenantClientError} `INVALID_BASE_URL` when `baseUrl` is not https (or http on loopback)
 * @throws `TypeError` when `auth` has no `getAccessToken`
 * @example
 * ```ts
 * const client = createTenantClient({ baseUrl: "https://acme.tenant.example", auth: staticToken(token) });
 * const { data, error } = await client.GET("/api/v1/auth/user");
 * if (error instanceof ForbiddenError) console.log("needs", error.requiredScope);
 * ```
 * @see RFC 6750 §2.1 (bearer header), §3 (challenges)
 * @see RFC 9110 §10.2.3 (Retry-After)
 * @see RFC 6749 §6 (refresh, behind `auth.onUnauthorized`)
 */
export function createTenantClient(options: TenantClientOptions): TenantClient {
  const { auth, retry } = options;
  const prefix = apiPrefix(options.baseUrl);
  if (typeof auth?.getAccessToken !== "function") throw new TypeError("auth.getAccessToken missing");
  const builtIn = coreMiddleware(prefix, auth, retry === false ? undefined : (retry ?? {}), BEARER | UNAUTHORIZED | NETWORK);
  const baseUrl = prefix.slice(0, -7);
  const client = createClient<RawPaths>({
    baseUrl,
    headers: { Accept: "application/json", ...options.headers },
    fetch: options.fetch!, // undefined: openapi-fetch defaults to globalThis.fetch
    // Requests for the API are created in manual redirect mode, so that the token never follows a
    // redirect and adding it costs no second Request. openapi-fetch builds a fresh init object for
    // every call, so it can be changed in place.
    Request: function (url: string, init: RequestInit): Request {
      if (init.redirect === "follow" && inScope(url, prefix)) init.redirect = "manual";
      return new Request(url, init);
    } as unknown as typeof Request,
  });
  client.use(...(options.middleware ?? []), builtIn);
  const guard: Middleware = {
    onRequest({ request }) {
      if (!inScope(request.url, prefix)) throw new PathOutsideApiError(request.url);
    },
  };
  const wrap = (raw?: boolean): TypedClient<RawPaths> => {
    const out: Record<string, unknown> = {
      request: (method: "get", url: `/api/v1/${string}`, init?: { middleware?: Middleware[] }) =>
        client
          .request(method, url, raw ? { ...init, middleware: [guard, ...(init?.middleware ?? [])] } : init)
          .then((result) => (result.response.status === 403 ? { error: forbidden(result.response, result.error), response: result.response } : result)),
      use(...middleware: Middleware[]) {
        client.eject(builtIn);
        client.use(...middleware, builtIn);
      },
      eject: client.eject,
    };
    for (const method of "GET PUT POST DELETE OPTIONS HEAD PATCH TRACE".split(" ")) {
      out[method] = (url: never, init: never) => (out["request"] as (m: string, u: never, i: never) => unknown)(method, url, init);
    }
    return out as unknown as TypedClient<RawPaths>;
  };
  return Object.assign(wrap() as unknown as TypedClient<paths>, { raw: wrap(true), baseUrl });
}

/** The error value of a 403: the scope named by the Bearer challenge, and the parsed body (RFC 6750 §3). */
function forbidden(response: Response, body: unknown): ForbiddenError {
  const challenge = bearerChallenge(response.headers.get("www-authenticate"));
  const scope = challenge?.["scope"]?.split(/[ \t]+/).filter(Boolean) ?? [];
  return challenge?.["error"] === "insufficient_scope" ? new InsufficientScopeError(scope, body) : new ForbiddenError(scope, body);
}
