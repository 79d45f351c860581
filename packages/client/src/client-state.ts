/**
 * The one state object of a tenant client, and of each middleware factory: its settings, fixed when
 * it is made, and the little that changes while it runs. `createTenantClient` builds it and binds to
 * it the behaviours of the modules beside this one, each a top-level `(state, …)` function named
 * after what it does, as the token manager does (`manager-state.ts`):
 *
 * | module | what it holds |
 * |---|---|
 * | `client-state.ts` | the state, its options checked |
 * | `call.ts` | the typed methods and `use`/`eject`, bound to the state; one call: its timeout, openapi-fetch, the error value of a non-2xx answer |
 * | `send.ts` | the client's `fetch`: what openapi-fetch calls once the caller's middleware has run |
 * | `middleware/bearer.ts` | the token: asked of the strategy, checked, added to API requests |
 * | `middleware/replay.ts` | the body kept for a request that may be sent again |
 * | `middleware/attempt.ts` | one send and its log line |
 * | `middleware/retry.ts` | the retry policy (opt-in) |
 * | `middleware/unauthorized-retry.ts` | the one refresh-and-retry after a 401 |
 * | `middleware/network-error.ts` | a failed fetch as a `NetworkError` |
 *
 * Each `middleware/` module also exports its concern as an openapi-fetch middleware for a plain
 * `createClient`, built on the same functions.
 */
import type { Client } from "openapi-fetch";
import type { FetchLike } from "@tenant-integration/internal";
import type { AccessTokenSource } from "./access-token-source.js";
import type { RawPaths } from "./client-types.js";
import type { Log } from "./logger.js";
import type { RetryInfo, RetryPolicy } from "./middleware/retry.js";
import type { CallTimeout } from "./timeout.js";

/** A fetch that takes a `Request` only, as openapi-fetch calls it. */
export type Fetch = (request: Request) => Promise<Response>;

/**
 * The token the client adds to API requests: the strategy, and the last token it gave that the
 * client checked. A resolved promise cannot change its value, so while the strategy keeps returning
 * the promise last seen resolved (`staticToken`, the token manager while its token stays fresh), the
 * token is added without awaiting or checking it again, and with the header value made when it was
 * checked: the fast path of every call.
 */
export interface BearerState {
  readonly auth: AccessTokenSource;
  /** The last promise `getAccessToken()` returned that was seen resolved. */
  seen: unknown;
  /** What it resolved to, checked against RFC 6750's `b64token`. */
  token: string | undefined;
  /**
   * `Bearer <token>`, made once per checked token. fetch checks a header value character by
   * character, and a string joined anew for each call would first be copied into one piece: for a
   * token of 800 characters (a JWT) that copy costs about a quarter of adding the header.
   */
  header: string | undefined;
}

/** What every concern reads: the tenant client's state has it, and so does each middleware factory's. */
export interface SendState {
  /** The tenant's API prefix, `<origin>/api/v1` (`apiPrefix`); `undefined` when no request is in scope. */
  readonly prefix: string | undefined;
  /** Where tokens come from; `undefined` for a concern that adds none. */
  readonly bearer: BearerState | undefined;
  /** The retry policy (`retryPolicy`); `undefined`: nothing is sent again but after a 401. */
  readonly retry: RetryPolicy | undefined;
  /** Called before each retry, instead of the policy's own `onRetry`. */
  readonly onRetry: ((info: RetryInfo) => void) | undefined;
  /** Where to log (`logTo`), already filtered by level; `undefined` writes nothing. */
  readonly log: Log | undefined;
  /** The tokens the request of each non-2xx answer carried, removed from its error value. */
  readonly tokensSent: WeakMap<Response, readonly string[]>;
}

/** A tenant client's state: see the table above. */
export interface ClientState extends SendState {
  /** The tenant's origin, without a trailing slash: the `baseUrl` option, validated. */
  readonly baseUrl: string;
  readonly prefix: string;
  readonly bearer: BearerState;
  /** The client's `timeout`; each call may pass its own. */
  readonly timeout: CallTimeout | false | undefined;
  /** Where requests go: the `fetch` option, else the global `fetch` (looked up at each call). */
  readonly fetch: Fetch;
  /** The one openapi-fetch client: the caller's middleware, and `send` as its `fetch`. */
  readonly openapi: Client<RawPaths>;
  /**
   * Whether middleware of the caller runs on every call (the `middleware` option, `use`): it may
   * replace the request and its body, so a body is then read before sending rather than kept as
   * serialized.
   */
  callerMiddleware: boolean;
}

/** The global `fetch`, looked up when called, as openapi-fetch's default is. */
export const globalFetch: Fetch = (request) => globalThis.fetch(request);

/** The state of a middleware factory: no client, only what its concern reads. */
export function sendState(options: Partial<Omit<SendState, "tokensSent" | "bearer">> & { auth?: AccessTokenSource }) {
  const state: SendState = {
    prefix: options.prefix,
    bearer: options.auth ? bearerState(options.auth) : undefined,
    retry: options.retry,
    onRetry: options.onRetry,
    log: options.log,
    tokensSent: new WeakMap(),
  };
  return state;
}

/** A strategy with no token seen yet. */
export const bearerState = (auth: AccessTokenSource): BearerState => ({
  auth,
  seen: undefined,
  token: undefined,
  header: undefined,
});

/** Wraps `fetch` so that it is called as a plain function, with a `Request` (a browser's fetch refuses another `this`). */
export const asFetch =
  (fetch: FetchLike): Fetch =>
  (request) =>
    fetch(request);
