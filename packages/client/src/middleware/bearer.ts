/**
 * The bearer token concern: which requests get a token, asking the strategy for it, checking it, and
 * adding it so that no redirect can carry it elsewhere.
 *
 * @see RFC 6750 §2.1 (the header), §5.2 and §5.3 (token redirect, TLS)
 */
import type { Middleware } from "openapi-fetch";
import type { AccessTokenSource } from "../access-token-source.js";
import { apiPrefix, inScope } from "../base-url.js";
import { type BearerState, bearerState } from "../client-state.js";
import { TenantClientError } from "../errors.js";
import type { Log } from "../logger.js";

/** Options of {@link bearerMiddleware} and {@link unauthorizedRetryMiddleware}. */
export interface BearerMiddlewareOptions {
  /** The tenant's base URL; only requests under `<baseUrl>/api/v1` are concerned. Validated like the client's. */
  readonly baseUrl: string;
  /** Where tokens come from. */
  readonly auth: AccessTokenSource;
}

/** RFC 6750 §2.1: what a bearer token may look like. */
const B64TOKEN = /^[\w\-.~+/]+=*$/;

/**
 * The token `pending` resolved to, once it is known to be a valid bearer token; remembered with its
 * promise. Only a value not seen before is checked.
 *
 * @throws {@link TenantClientError} `INVALID_TOKEN` (never echoing the value) for anything else
 */
export function acceptToken(bearer: BearerState, pending: unknown, value: unknown): string {
  if (typeof value !== "string" || (value !== bearer.token && !B64TOKEN.test(value)))
    throw new TenantClientError("INVALID_TOKEN", "Invalid token");
  bearer.seen = pending;
  bearer.token = value;
  bearer.header = `Bearer ${value}`;
  return value;
}

/** A request on its way (the tenant client's exchange while it is prepared) and the token it carries. */
export interface Carrier {
  request: Request;
  token: string | undefined;
}

/**
 * Gives `outgoing` the current token: its request authorized ({@link authorize}) and the token
 * recorded, at once when the strategy returns the promise last seen resolved (the fast path of every
 * call: nothing awaited or checked again), else once the strategy's answer is checked, when the
 * returned promise resolves. What the strategy throws passes on unchanged.
 *
 * @see RFC 6750 §2.1 (the Authorization request header field)
 */
export function giveToken(bearer: BearerState, log: Log | undefined, outgoing: Carrier): Promise<void> | undefined {
  const pending = bearer.auth.getAccessToken();
  if (bearer.token !== undefined && pending === bearer.seen) return carry(outgoing, bearer, bearer.token);
  log?.("token", outgoing.request, {});
  return Promise.resolve(pending).then((value) => void carry(outgoing, bearer, acceptToken(bearer, pending, value)));
}

/** `outgoing` with `token`: its request authorized, the token recorded. */
function carry(outgoing: Carrier, bearer: BearerState, token: string): undefined {
  outgoing.request = authorize(outgoing.request, bearer, token);
  outgoing.token = token;
  return undefined;
}

/** A new token from the strategy, checked, after `onUnauthorized`. */
export async function freshToken(bearer: BearerState): Promise<string> {
  const pending = bearer.auth.getAccessToken();
  return acceptToken(bearer, pending, await pending);
}

/**
 * `request` with `Authorization: Bearer <token>`: the header value made when the token was checked,
 * while it is the current one (every call but one whose token was overtaken by a newer one). A
 * request that carries the token must not follow a redirect (RFC 6750 §5.2): the tenant client
 * creates API requests in "manual" mode already; one in "follow" mode (replaced by a middleware, or
 * on a plain client) is copied in "manual" mode first.
 */
export function authorize(request: Request, bearer: BearerState, token: string): Request {
  const sent = request.redirect === "follow" ? new Request(request, { redirect: "manual" }) : request;
  sent.headers.set("authorization", token === bearer.token ? bearer.header! : `Bearer ${token}`);
  return sent;
}

/** `onRequest` of {@link bearerMiddleware}: the request with the token, when it is in scope (`undefined` when the header went on the same one). */
function addToken(
  prefix: string,
  bearer: BearerState,
  { request }: { request: Request },
): Request | undefined | Promise<Request> {
  if (!inScope(request.url, prefix)) return undefined;
  const outgoing: Carrier = { request, token: undefined };
  const given = giveToken(bearer, undefined, outgoing);
  if (given) return given.then(() => outgoing.request);
  return outgoing.request === request ? undefined : outgoing.request;
}

/**
 * Middleware that adds `Authorization: Bearer <token>` to requests whose normalized URL is on the
 * tenant's origin under `/api/v1`, and only to those: never to `/oauth/*`, another origin (even as
 * an absolute URL) or a path that leaves `/api/v1` through `..`. The strategy is not even asked for
 * a token for other requests.
 *
 * A request that carries the token is sent with `redirect: "manual"`, and no redirect is followed,
 * not even to the same origin: the 3xx comes back to the caller as it is (safer than deciding which
 * hops may keep the token). In browsers a manual redirect is an opaque response (status 0) and is
 * returned as is.
 *
 * Register it after middleware that rewrites requests, so that it sees the final URL. (The tenant
 * client does this itself, as its `fetch`: it needs no middleware.)
 *
 * @param options - the tenant base URL and the token source
 * @returns an openapi-fetch middleware
 * @throws {@link TenantClientError} `INVALID_OPTIONS` (synchronously) for an unacceptable `baseUrl`
 * @throws {@link TenantClientError} with code `INVALID_TOKEN` (from the request) when the strategy yields a value outside `b64token`
 * @example
 * ```ts
 * import createClient from "openapi-fetch";
 * const client = createClient<paths>({ baseUrl: "https://acme.tenant.example" });
 * client.use(bearerMiddleware({ baseUrl: "https://acme.tenant.example", auth: staticToken(token) }));
 * ```
 * @see RFC 6750 §2.1 (the Authorization request header field)
 * @see RFC 6750 §5.2 and §5.3 (token redirect, TLS)
 * @see RFC 9110 §15.4 (redirection)
 */
export function bearerMiddleware(options: BearerMiddlewareOptions): Middleware {
  return { onRequest: addToken.bind(null, apiPrefix(options.baseUrl), bearerState(options.auth)) };
}
