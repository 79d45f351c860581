import createClient, { type Client, type HeadersOptions, type Middleware } from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import { createApiScope, type ApiScope } from "./api-scope.js";
import type { AuthStrategy } from "./auth-strategy.js";
import { validateBaseUrl } from "./base-url.js";
import type { RawPaths, TypedClient } from "./client-types.js";
import { PathOutsideApiError } from "./errors.js";
import { withForbiddenError } from "./forbidden.js";
import { followIntent } from "./internal/replay.js";
import { bearerMiddleware } from "./middleware/bearer.js";
import { networkErrorMiddleware } from "./middleware/network-error.js";
import { retryMiddleware, type RetryOptions } from "./middleware/retry.js";
import { unauthorizedRetryMiddleware } from "./middleware/unauthorized-retry.js";

/** Options of {@link createTenantClient}. */
export interface TenantClientOptions {
  /**
   * The tenant's address, e.g. `https://acme.tenant.example`. Must be `https:`; `http:` only on a
   * loopback host. A path is allowed (the API is then under `<path>/api/v1`); credentials, a query
   * or a fragment are not.
   */
  readonly baseUrl: string;
  /** Where bearer tokens come from: the token manager, {@link staticToken}, or any {@link AuthStrategy}. */
  readonly auth: AuthStrategy;
  /** The fetch to send requests with. Default `globalThis.fetch`. Tests inject one. */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Retry policy for 429 and 5xx on idempotent methods, or `false` to turn retries off. Default {@link retryDefaults}. */
  readonly retry?: RetryOptions | false;
  /** Headers sent with every request. Default `{ Accept: "application/json" }`; yours are merged over it. */
  readonly headers?: HeadersOptions;
  /** More middleware, as if passed to `client.use()`: it runs before the built-ins on requests, after them on responses. */
  readonly middleware?: readonly Middleware[];
}

/**
 * The tenant client: typed `GET`/`POST`/… for every operation of the contract, plus `raw` for
 * `/api/v1` routes the contract does not list yet.
 */
export interface TenantClient extends TypedClient<paths> {
  /**
   * The untyped escape hatch for `/api/v1/…` routes the contract does not list yet, with the same
   * auth, retries and error values. It refuses (rejects with {@link PathOutsideApiError}, sending
   * nothing) any URL that is not under `/api/v1` of the tenant after normalization.
   */
  readonly raw: TypedClient<RawPaths>;
  /** The validated base URL, without a trailing slash. */
  readonly baseUrl: string;
}

const METHODS = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"] as const;

/**
 * Creates the typed client of one tenant: an openapi-fetch client over the contract's `paths`, with
 * these middleware, in registration order (requests pass through in this order, responses in reverse):
 *
 * 1. your `middleware` (and anything added with `use`), so the built-ins see your final request;
 * 2. {@link networkErrorMiddleware}: a rejected fetch becomes a thrown {@link NetworkError};
 * 3. {@link unauthorizedRetryMiddleware}: a 401 calls `auth.onUnauthorized(token)` and retries once;
 * 4. {@link retryMiddleware} (unless `retry: false`): 429 and 5xx on idempotent methods, with backoff;
 * 5. {@link bearerMiddleware}: the token, only for `/api/v1` of the tenant; no cross-origin redirects.
 *
 * Results are openapi-fetch's `{ data, error, response }`; no HTTP status throws. A 403 comes back
 * with `error` set to a {@link ForbiddenError} (or {@link InsufficientScopeError}) naming the scope the
 * route requires. Requests for the tenant's API are created with `redirect: "manual"` (same-origin
 * redirects are followed by the middleware), so adding the token costs no extra `Request`.
 *
 * @param options - see {@link TenantClientOptions}
 * @returns the client
 * @throws {@link InvalidBaseUrlError} when `baseUrl` is not https (or http on loopback)
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
  const baseUrl = validateBaseUrl(options.baseUrl);
  const auth = options.auth;
  if (auth === null || typeof auth !== "object" || typeof auth.getAccessToken !== "function") {
    throw new TypeError("createTenantClient: `auth` must be an AuthStrategy with getAccessToken()");
  }
  const scope = createApiScope(baseUrl);

  const builtIns: Middleware[] = [networkErrorMiddleware(), unauthorizedRetryMiddleware({ baseUrl, auth })];
  if (options.retry !== false) builtIns.push(retryMiddleware({ ...options.retry, baseUrl }));
  builtIns.push(bearerMiddleware({ baseUrl, auth }));

  const clientOptions = {
    baseUrl,
    Request: tenantRequest(scope),
    headers: { Accept: "application/json", ...headersRecord(options.headers) },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };
  const typed = createClient<paths>(clientOptions);
  const raw = createClient<RawPaths>(clientOptions);
  const rawGuard: Middleware = {
    onRequest({ request }) {
      if (!scope.contains(request.url)) throw new PathOutsideApiError(request.url);
      return undefined;
    },
  };

  const extra: Middleware[] = [...(options.middleware ?? [])];
  const install = (): void => {
    typed.eject(...extra, ...builtIns);
    raw.eject(rawGuard, ...extra, ...builtIns);
    typed.use(...extra, ...builtIns);
    raw.use(rawGuard, ...extra, ...builtIns);
  };
  install();

  const use = (...middleware: Middleware[]): void => {
    typed.eject(...extra, ...builtIns);
    raw.eject(rawGuard, ...extra, ...builtIns);
    extra.push(...middleware);
    install();
  };
  const eject = (...middleware: Middleware[]): void => {
    typed.eject(...extra, ...builtIns);
    raw.eject(rawGuard, ...extra, ...builtIns);
    for (const m of middleware) {
      const i = extra.indexOf(m);
      if (i !== -1) extra.splice(i, 1);
    }
    install();
  };

  return Object.assign(wrap<paths>(typed, use, eject), { raw: wrap<RawPaths>(raw, use, eject), baseUrl });
}

/** The openapi-fetch client with every method's 403 turned into a ForbiddenError. */
function wrap<P extends {}>(client: Client<P>, use: (...m: Middleware[]) => void, eject: (...m: Middleware[]) => void): TypedClient<P> {
  const inner = client as unknown as Record<string, (url: string, init?: unknown) => Promise<{ response: Response; error?: unknown }>> & {
    request: (method: string, url: string, init?: unknown) => Promise<{ response: Response; error?: unknown }>;
  };
  const out: Record<string, unknown> = {
    request: (method: string, url: string, init?: unknown) => inner.request(method, url, init).then(withForbiddenError),
    use,
    eject,
  };
  for (const method of METHODS) {
    const call = inner[method] as (url: string, init?: unknown) => Promise<{ response: Response; error?: unknown }>;
    out[method] = (url: string, init?: unknown) => call(url, init).then(withForbiddenError);
  }
  return out as unknown as TypedClient<P>;
}

/**
 * A `Request` constructor for openapi-fetch that creates requests for the tenant's API in
 * `redirect: "manual"` mode when the caller left redirects to be followed, and marks them so that
 * the bearer middleware follows same-origin redirects itself. Doing it at creation time spares
 * the bearer middleware a second `Request` per call.
 */
function tenantRequest(scope: ApiScope): typeof Request {
  function TenantRequest(input: RequestInfo | URL, init?: RequestInit): Request {
    if (init !== undefined && init.redirect === "follow" && typeof input === "string" && scope.contains(input)) {
      // openapi-fetch builds a fresh init object for every call, so it can be changed in place
      init.redirect = "manual";
      const request = new Request(input, init);
      followIntent.add(request);
      return request;
    }
    return new Request(input, init);
  }
  return TenantRequest as unknown as typeof Request;
}

function headersRecord(headers: HeadersOptions | undefined): Record<string, string> {
  if (headers === undefined) return {};
  const out: Record<string, string> = {};
  if (headers instanceof Headers || Array.isArray(headers)) {
    new Headers(headers as HeadersInit).forEach((value, key) => {
      out[key] = value;
    });
    return out;
  }
  for (const [key, value] of Object.entries(headers)) {
    if (value === null || value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}
