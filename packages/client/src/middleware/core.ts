/**
 * Internal: the one implementation behind every middleware of this package. `createTenantClient`
 * registers a single instance with every part switched on, so openapi-fetch runs one hook per
 * phase; the exported factories (`bearerMiddleware`, …) are the same code with one part on, usable
 * on their own with a plain `createClient`.
 *
 * Hot path (a GET answered 2xx, no logger): `onResponse` returns synchronously; `onRequest` too when
 * `getAccessToken()` returns the promise already seen resolved (a resolved promise cannot change its
 * value: `staticToken`, and the token manager while its token stays fresh), else it takes one step
 * from the strategy's answer to the request, and a token already seen valid is not checked again.
 *
 * What a call keeps between its hooks lives in the WeakMaps below, keyed by the call's `options`
 * object (openapi-fetch hands each hook the same frozen one) and shared by every instance of this
 * middleware on a client, so that one call's body is kept once; the tokens sent for an answer are
 * keyed by its Response, which is what the tenant client gets back. None is touched on the hot path.
 */
import type { Middleware } from "openapi-fetch";
import type { AccessTokenSource } from "../access-token-source.js";
import { inScope } from "../base-url.js";
import { bearerTokenOf, NetworkError, TenantClientError, TimeoutError } from "../errors.js";
import type { Log } from "../logger.js";
import type { Outcome, RetryInfo, RetryPolicy } from "./retry.js";

/** The parts of the middleware, each switched on by name. */
export interface CoreParts {
  /** Add `Authorization: Bearer <token>` to requests under the API prefix. */
  readonly bearer?: boolean;
  /** Answer a 401 by asking the strategy for a new token and sending once more. */
  readonly unauthorized?: boolean;
  /** Turn a rejected fetch into a thrown {@link NetworkError}. */
  readonly network?: boolean;
}

/** What the core middleware is built from. */
export interface CoreOptions {
  /** The tenant's API prefix (from `apiPrefix`), or `undefined` (no request is in scope). */
  readonly prefix: string | undefined;
  /** The strategy (needed by the bearer and unauthorized parts). */
  readonly auth?: AccessTokenSource | undefined;
  /** The retry policy (from `retryPolicy`), or `undefined` for no retries. */
  readonly retry?: RetryPolicy | undefined;
  /** Called before each retry, instead of the policy's own `onRetry`. */
  readonly onRetry?: ((info: RetryInfo) => void) | undefined;
  /** Which parts are on. */
  readonly parts: CoreParts;
  /** Where to log, already filtered by level; `undefined` writes nothing. */
  readonly log?: Log | undefined;
}

type Fetch = (request: Request) => Promise<Response>;

/**
 * One call (one `client.GET(…)`) past its first send: the final request and openapi-fetch's
 * per-call `options`, which key what the call keeps. Not the request: middleware registered after
 * this one may replace it.
 */
interface Call {
  readonly fetch: Fetch;
  readonly request: Request;
  readonly options: object;
}

/** Request bodies kept for calls that may have to send again; by `options`. */
const keptBodies = new WeakMap<object, BodyInit>();

/** The body each call's serializer produced, by the serializer (openapi-fetch gives it to middleware in `options`). */
const serialized = new WeakMap<object, unknown>();

/**
 * Internal: wraps a call's body serializer so that the built-in middleware can send the serialized
 * body again on a replay (after a 401, or a retry) instead of reading a copy of the request before
 * it is sent. The tenant client uses it only when no middleware of the caller runs before the
 * built-in one (such middleware may replace the request and its body); a body is then read as before.
 */
export function keepingBody(
  serialize: (body: never, headers?: never) => unknown,
): (body: never, headers?: never) => unknown {
  const keeping = (body: never, headers?: never): unknown => {
    const result = serialize(body, headers);
    serialized.set(keeping, result);
    return result;
  };
  return keeping;
}

/**
 * Whether a body can be given to a new Request as it is, with the same headers: a string, bytes, a
 * Blob or URLSearchParams. A stream can be read only once; FormData would get a new boundary.
 */
function isResendable(body: unknown): body is BodyInit {
  return (
    typeof body === "string" ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams
  );
}

/** When each call's first attempt was sent (`performance.now()`), for its log line; kept only when logging. */
const sentAt = new WeakMap<object, number>();

/**
 * The tokens sent for each non-2xx response the middleware returned, so that the client can
 * remove them from the error value's headers and body.
 */
export const tokensSentFor = new WeakMap<Response, readonly string[]>();

/** RFC 6750 §2.1: what a bearer token may look like. */
const B64TOKEN = /^[\w\-.~+/]+=*$/;

/** Releases a replaced response's body; not awaited (a cancelled tee branch settles late). */
export function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined);
}

/** The thrown error for a rejected fetch: a TimeoutError when a timeout aborted it. */
function networkError(request: Request, cause: unknown): NetworkError {
  const timedOut =
    (cause as Error | null)?.name === "TimeoutError" ||
    (request.signal.reason as Error | undefined)?.name === "TimeoutError";
  return timedOut ? new TimeoutError(request, cause) : new NetworkError(request, cause);
}

/** Whether the call's request can be sent again: it has no body, or its body was kept. */
function replayable({ request, options }: Omit<Call, "fetch">): boolean {
  return request.body === null || keptBodies.has(options);
}

/** A fresh copy of the call's (possibly sent) request with its kept body, and a new token if given. */
function rebuild({ request, options }: Call, token?: string): Request {
  const headers = new Headers(request.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return new Request(request, { headers, body: keptBodies.get(options) ?? null });
}

/** The token the request carried, kept for the error value of a non-2xx answer. */
function rememberToken(response: Response, request: Request): void {
  const sent = bearerTokenOf(request);
  if (sent) tokensSentFor.set(response, [sent]);
}

/** Builds the middleware; see {@link CoreOptions}. */
export function coreMiddleware({ prefix, auth, retry, onRetry, parts, log }: CoreOptions): Middleware {
  // Responses this instance's onError produced by retrying: logged and settled there, so its
  // onResponse leaves them (another instance on the same client still handles them: a 401 after a
  // recovered network failure is refreshed by the unauthorized part).
  const recovered = new WeakSet<Response>();
  // the last token promise seen resolved, and the valid token it resolved to
  let seenPromise: unknown;
  let token: string | undefined;

  // a request that a retry may send again (idempotent, under a policy that retries)
  const mayRetry = (request: Request): boolean => retry?.mayRetry(request) === true;

  /** What `onRequest` returns as the call goes out: when logging, its send time is noted for the log line. */
  const sending = (options: object, replaced?: Request): Request | undefined => {
    if (log) sentAt.set(options, performance.now());
    return replaced;
  };

  // A request that carries the token must not follow redirects (RFC 6750 §5.2): the tenant client
  // creates API requests in "manual" mode already; on a plain client this costs one more Request.
  const authorize = (request: Request, value: string): Request | undefined => {
    const manual = request.redirect === "follow" ? new Request(request, { redirect: "manual" }) : undefined;
    (manual ?? request).headers.set("authorization", `Bearer ${value}`);
    return manual;
  };

  /** The token `pending` resolved to, once it is known to be a valid bearer token (checked once per new value). */
  const accept = (pending: unknown, value: unknown): string => {
    // the token of the last call is known to be valid: only a new value is checked
    if (typeof value !== "string" || (value !== token && !B64TOKEN.test(value)))
      throw new TenantClientError("INVALID_TOKEN", "Invalid token");
    seenPromise = pending;
    token = value;
    return value;
  };

  const freshToken = async (pending = auth!.getAccessToken()): Promise<string> => accept(pending, await pending);

  /** The request with the current token, as `onRequest` returns it; awaits the strategy only for a promise not seen resolved. */
  const withToken = (request: Request, options: object): Request | undefined | Promise<Request | undefined> => {
    const pending = auth!.getAccessToken();
    // same promise as last time: it resolved to `token`, so no await is needed
    if (token !== undefined && pending === seenPromise) return sending(options, authorize(request, token));
    log?.("token", request, {});
    // one step from the strategy's answer to the request (a new token, or a strategy that gives a new promise each call)
    return Promise.resolve(pending).then((value) => sending(options, authorize(request, accept(pending, value))));
  };

  /** Logs what an attempt came to: its status, or its failure, with its duration and number. */
  const logOutcome = (request: Request, outcome: Outcome, attempt: number, started: number | undefined): void => {
    if (!log) return;
    const durationMs = Math.round(performance.now() - (started ?? performance.now()));
    if (outcome instanceof Response) log("answered", request, { status: outcome.status, durationMs, attempt });
    else log("failed", request, { error: outcome.name, code: outcome.code, durationMs, attempt });
  };

  /** Sends one more attempt straight to fetch; a rejection comes back as a NetworkError. Logged. */
  const sendAttempt = async (fetch: Fetch, request: Request, attempt: number): Promise<Outcome> => {
    const started = log ? performance.now() : undefined;
    let outcome: Outcome;
    try {
      outcome = await fetch(request);
    } catch (cause) {
      outcome = networkError(request, cause);
    }
    logOutcome(request, outcome, attempt, started);
    return outcome;
  };

  /** Retries `first` under the policy, each attempt straight to fetch; returns the last outcome and its attempt's number. */
  const retryLoop = (call: Call, first: Outcome): Promise<[Outcome, number]> =>
    retry!.run(call.request, first, (attempt) => sendAttempt(call.fetch, rebuild(call), attempt), log, onRetry);

  /**
   * After a 401 to a request that carried our token: tell the strategy, get a new token and send
   * once more if it differs. A strategy that fails here (the session ended) is logged and its
   * error reaches the caller unchanged.
   */
  const answerUnauthorized = async (
    call: Call,
    response: Response,
    rejected: string,
    attempt: number,
  ): Promise<Response> => {
    const { request } = call;
    log?.("refreshing", request, {});
    let next: string;
    try {
      await auth!.onUnauthorized?.(rejected);
      next = await freshToken();
    } catch (failure) {
      const { name: error, code } = (failure ?? {}) as { name?: unknown; code?: unknown };
      log?.("session-ended", request, { error, code });
      throw failure;
    }
    if (next === rejected) {
      log?.("no-new-token", request, {});
      return response;
    }
    log?.("refreshed", request, {});
    discard(response);
    const outcome = await sendAttempt(call.fetch, rebuild(call, next), attempt + 1);
    if (outcome instanceof NetworkError) throw outcome;
    tokensSentFor.set(outcome, [rejected, next]);
    return outcome;
  };

  /** The last step for an answer: the one refresh-and-retry after a 401, and the token sent remembered for an error value. */
  const settle = async (call: Call, response: Response, attempt: number): Promise<Response> => {
    const { request } = call;
    const rejected = bearerTokenOf(request);
    const refresh =
      parts.unauthorized &&
      response.status === 401 &&
      rejected !== undefined &&
      replayable(call) &&
      inScope(request.url, prefix);
    const settled = refresh ? await answerUnauthorized(call, response, rejected, attempt) : response;
    if (!settled.ok && !tokensSentFor.has(settled)) rememberToken(settled, request);
    return settled;
  };

  /** A response that needs more: retries, then the refresh-and-retry of a 401; `undefined` keeps `response`. */
  const answer = async (call: Call, response: Response, retryNow: boolean): Promise<Response | undefined> => {
    const [outcome, attempt] = retryNow ? await retryLoop(call, response) : [response, 1];
    if (outcome instanceof NetworkError) throw outcome;
    const settled = await settle(call, outcome, attempt);
    return settled === response ? undefined : settled;
  };

  /** Reads a copy of the body before the first send (a body the middleware did not see created). */
  const keepCopy = async (
    request: Request,
    options: object,
    addToken: boolean | undefined,
  ): Promise<Request | undefined> => {
    log?.("keep-copy", request, {});
    keptBodies.set(options, await request.clone().arrayBuffer());
    return addToken ? withToken(request, options) : sending(options);
  };

  return {
    onRequest({ request, options }) {
      const scoped = inScope(request.url, prefix);
      const addToken = parts.bearer && scoped;
      // keep the body when a 401 or a retry may have to send it again (once per call: another of
      // these middlewares on the same client may have kept it already)
      if (request.body !== null && !keptBodies.has(options) && ((parts.unauthorized && scoped) || mayRetry(request))) {
        const { bodySerializer } = options as { bodySerializer?: object };
        const created = bodySerializer === undefined ? undefined : serialized.get(bodySerializer);
        if (created !== undefined) {
          // the tenant client's request: its serialized body is kept as it is, no copy is read; a
          // streamed body can be sent once only, so the call is not sent again
          if (isResendable(created)) keptBodies.set(options, created);
          else log?.("stream-body", request, {});
        } else {
          // a plain openapi-fetch client, or a request that middleware replaced: read a copy
          return keepCopy(request, options, addToken);
        }
      }
      return addToken ? withToken(request, options) : sending(options);
    },

    onResponse({ request, response, options }) {
      // a response our onError recovered by retrying has been logged and settled already
      if (recovered.has(response)) return undefined;
      if (log) logOutcome(request, response, 1, sentAt.get(options));
      const retryNow = retry?.worthRetrying(request, response) === true && replayable({ request, options });
      const refresh = parts.unauthorized && response.status === 401;
      if (!retryNow && !refresh) {
        if (!response.ok) rememberToken(response, request);
        return undefined;
      }
      return answer({ fetch: options.fetch as Fetch, request, options }, response, retryNow);
    },

    async onError({ request, error, options }) {
      if (error instanceof TenantClientError) return error;
      const failure = networkError(request, error);
      if (log) logOutcome(request, failure, 1, sentAt.get(options));
      const call: Call = { fetch: options.fetch as Fetch, request, options };
      // only a failed connection is retried (delayBefore says so too), and only a request that can be sent again
      if (retry?.worthRetrying(request, failure) !== true || !replayable(call))
        return parts.network ? failure : undefined;
      const [outcome, attempt] = await retryLoop(call, failure);
      // without the network part, the original error goes on unchanged, as without retries
      if (outcome instanceof NetworkError) return parts.network ? outcome : undefined;
      const settled = await settle(call, outcome, attempt);
      recovered.add(settled);
      return settled;
    },
  };
}
