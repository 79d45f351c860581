/**
 * Internal: the one implementation behind every middleware of this package. `createTenantClient`
 * registers a single instance with every part switched on, so openapi-fetch runs one hook per
 * phase; the exported factories (`bearerMiddleware`, …) are the same code with one part on, usable
 * on their own with a plain `createClient`.
 *
 * Hot path (a GET answered 2xx): `onRequest` and `onResponse` return synchronously, allocate
 * nothing but the header value, and `getAccessToken()` is awaited only when it returns a promise
 * other than the one already seen resolved (a resolved promise cannot change its value).
 */
import type { Middleware, MiddlewareCallbackParams } from "openapi-fetch";
import type { AuthStrategy } from "../auth-strategy.js";
import { inScope } from "../base-url.js";
import { bearerTokenOf, NetworkError, TenantClientError } from "../errors.js";
import { parseRetryAfter } from "../retry-after.js";
import type { RetryOptions } from "./retry.js";

/** The parts of the middleware. */
export const BEARER = 1;
export const UNAUTHORIZED = 2;
export const NETWORK = 4;

type Params = MiddlewareCallbackParams & { response: Response };
type Fetch = (request: Request) => Promise<Response>;

/** Request bodies read before the first send, keyed by openapi-fetch's per-call `options` object. */
const bodies = new WeakMap<object, ArrayBuffer>();

const IDEMPOTENT = /^(GET|HEAD|OPTIONS|PUT|DELETE)$/;
const B64TOKEN = /^[\w\-.~+/]+=*$/;

/** 429 and 5xx, except 501 and 505, which say the request can never succeed (RFC 9110 §15.6.2, §15.6.6). */
const retryable = (s: number): boolean => s === 429 || (s > 499 && s < 600 && s !== 501 && s !== 505);

/** Releases a replaced response's body; not awaited (a cancelled tee branch settles late). */
const discard = (response: Response): void => void response.body?.cancel().catch(() => undefined);

function sleepDefault(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => resolve(clearTimeout(timer)), { once: true });
  });
}

/** Sends, turning a rejection into a NetworkError. */
async function send(fetch: Fetch, request: Request): Promise<Response> {
  try {
    return await fetch(request);
  } catch (cause) {
    throw new NetworkError(request, cause);
  }
}

/** A fresh copy of a (possibly sent) request with its kept body, and a new token if given. */
function rebuild(request: Request, body: ArrayBuffer | null, token?: string): Request {
  const headers = new Headers(request.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return new Request(request, { headers, body });
}

/**
 * The middleware with the given parts switched on.
 *
 * @param prefix - the tenant's API prefix (from `apiPrefix`); `undefined` for a retry middleware
 *   without a base URL, which then drops `Authorization` on every redirect hop
 * @param auth - the strategy (needed by BEARER and UNAUTHORIZED)
 * @param retry - the retry policy, or `undefined` for no retries
 * @param parts - BEARER | UNAUTHORIZED | NETWORK
 */
export function coreMiddleware(prefix: string | undefined, auth: AuthStrategy | undefined, retry: RetryOptions | undefined, parts: number): Middleware {
  const retries = retry?.retries ?? 2;
  const baseDelay = retry?.baseDelayMs ?? 300;
  const maxDelay = retry?.maxDelayMs ?? 10_000;
  const sleep = retry?.sleep ?? sleepDefault;
  const random = retry?.random ?? Math.random;
  const now = retry?.now ?? Date.now;
  // the last token promise seen resolved, and its valid value
  let seen: unknown;
  let token = "";

  // A request that carries the token must not follow redirects (RFC 6750 §5.2): the tenant client
  // creates API requests in "manual" mode already; on a plain client this costs one more Request.
  const authorize = (request: Request, value: string): Request | undefined => {
    const manual = request.redirect === "follow" ? new Request(request, { redirect: "manual" }) : undefined;
    (manual ?? request).headers.set("authorization", `Bearer ${value}`);
    return manual;
  };

  const fresh = async (pending = auth!.getAccessToken()): Promise<string> => {
    const value = await pending;
    if (typeof value !== "string" || !B64TOKEN.test(value)) throw new TenantClientError("INVALID_TOKEN", "Invalid token");
    seen = pending;
    return (token = value);
  };

  const withToken = (request: Request): Request | undefined | Promise<Request | undefined> => {
    // same promise as last time: it resolved to `token`, so no await is needed
    const pending = auth!.getAccessToken();
    return pending === seen ? authorize(request, token) : fresh(pending).then((value) => authorize(request, value));
  };

  const middleware: Middleware = {
    onRequest({ request, options }) {
      const scoped = parts & (BEARER | UNAUTHORIZED) && inScope(request.url, prefix);
      const bearer = parts & BEARER && scoped;
      // keep a replayable copy of the body when a 401 or a retry may have to send it again
      if (request.body !== null && !bodies.has(options) && ((parts & UNAUTHORIZED && scoped) || (retry && retries && IDEMPOTENT.test(request.method)))) {
        return request
          .clone()
          .arrayBuffer()
          .then((body) => {
            bodies.set(options, body);
            return bearer ? withToken(request) : undefined;
          });
      }
      return bearer ? withToken(request) : undefined;
    },

    onResponse(params) {
      const { request, response } = params;
      const s = response.status;
      // synchronous unless there is a status to retry or a 401 to answer
      return (s === 401 ? parts & UNAUTHORIZED : retry && retries && retryable(s) && IDEMPOTENT.test(request.method)) ? answer(params) : undefined;
    },
  };
  if (parts & NETWORK) {
    middleware.onError = ({ request, error }) => (error instanceof TenantClientError ? error : new NetworkError(request, error));
  }
  return middleware;

  async function answer({ request, response, options }: Params): Promise<Response | undefined> {
    const fetch = options.fetch as Fetch;
    const body = request.body === null ? null : bodies.get(options);
    const resend = (token?: string): Promise<Response> => send(fetch, rebuild(request, body!, token));
    let res = response;

    if (retry && body !== undefined && IDEMPOTENT.test(request.method)) {
      for (let attempt = 0; attempt < retries && retryable(res.status) && !request.signal.aborted; attempt++) {
        const after = parseRetryAfter(res.headers.get("retry-after"), now());
        const d = Math.min(maxDelay, baseDelay * 2 ** attempt);
        const delay = after ?? d / 2 + (random() * d) / 2;
        if (delay > maxDelay) break; // the server asks for longer than we wait: return its answer
        await sleep(delay, request.signal);
        if (request.signal.aborted) break;
        discard(res);
        res = await resend();
      }
    }

    const rejected = bearerTokenOf(request);
    if (parts & UNAUTHORIZED && res.status === 401 && rejected && body !== undefined && inScope(request.url, prefix)) {
      await auth!.onUnauthorized?.(rejected);
      const next = await fresh();
      if (next !== rejected) {
        discard(res);
        res = await resend(next);
      }
    }
    return res === response ? undefined : res;
  }
}
