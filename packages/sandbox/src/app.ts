/**
 * `createSandbox`: the Hono app of one in-memory tenant, plus its state and controls. Web APIs
 * only (fetch `Request`/`Response`, WebCrypto), so it runs on Node, Deno, Bun and workers.
 *
 * @module
 */
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { MAX_BODY_BYTES } from "./body.js";
import { ClientRegistry, type ClientRegistration } from "./clients.js";
import { createClock, type Clock } from "./clock.js";
import { CodeStore } from "./codes.js";
import { BadRequestError, methodNotAllowed, notFound, oauthError } from "./errors.js";
import { EventLog, type SandboxEvent } from "./events.js";
import { RefreshLedger, type SandboxLedger } from "./ledger.js";
import { PendingRequests } from "./pending.js";
import { RequestLog } from "./requests.js";
import {
  CLOCK_PATH,
  EVENTS_PATH,
  FAULTS_PATH,
  LEDGER_PATH,
  REQUESTS_PATH,
  registerAdminRoutes,
  USERS_PATH,
} from "./routes/admin.js";
import { authorizeRoute, CONSENT_PATH } from "./routes/authorize.js";
import { consentRoute } from "./routes/consent.js";
import { revokeRoute } from "./routes/revoke.js";
import { tokenRoute } from "./routes/token.js";
import { USER_SCOPE, userRoute } from "./routes/user.js";
import { DEMO_USERS, idOf, SandboxUsers, type UserId, type UserRecord } from "./users.js";
import type { SandboxState } from "./tenant-state.js";
import { MAX_ROTATION_GRACE_SECONDS, TokenStore, type IssuedTokens } from "./tokens.js";
import { checkScope } from "./scopes.js";
import { cors, corsPath } from "./cors.js";
import { delay, droppedConnection, faultResponse, Faults, type Fault, type FaultSpec } from "./faults.js";
import { hostCheck } from "./hosts.js";
import { Housekeeping } from "./housekeeping.js";
import { SNAPSHOT_VERSION, type SandboxSnapshot } from "./snapshot.js";

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** The registered OAuth clients. */
  readonly clients?: readonly ClientRegistration[];
  /** Approve every valid authorization request at once (302 with a code) instead of showing the consent page. */
  readonly autoApprove?: boolean;
  /**
   * Add the test routes `/__sandbox/clock`, `/__sandbox/events`, `/__sandbox/ledger`,
   * `/__sandbox/requests`, `/__sandbox/faults` and `/__sandbox/users`; without it they answer 404.
   */
  readonly testClock?: boolean;
  /** The base time source in milliseconds (default `Date.now`); the clock adds its offset to it. */
  readonly now?: () => number;
  /**
   * The users who can sign in (default {@link DEMO_USERS}: ids 42, 43 and 44): their records, each
   * with an `id` (a non-empty string or a whole number), the first being the one a sign-in is approved
   * as unless the consent page or the `sandbox_user` parameter chooses another; or how many demo users
   * to make (1 to 10 000: the three demo users, then ids 45, 46…). `GET /api/v1/auth/user` answers
   * each token with the record of the user who approved its grant.
   */
  readonly users?: readonly UserRecord[] | number;
  /** Scopes granted when a request has no `scope` and the client no allow-list (default `["profile:read"]`). */
  readonly defaultScopes?: readonly string[];
  /**
   * Called with an unexpected error before the sandbox answers it with 500 (a bug in the sandbox),
   * and, under `startSandbox` with a `stateFile`, with a `StateFileError` when a background write fails.
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Host names the sandbox answers besides the loopback names (`localhost`, `*.localhost`,
   * `127.0.0.0/8`, `[::1]`), e.g. `["tenant.test"]` for a base URL `http://tenant.test`. A request
   * for any other host gets `421`, so that a web page cannot reach the sandbox through DNS
   * rebinding. `startSandbox` adds the host it listens on.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Seconds after a rotation during which the rotated-away refresh token, presented again, gets
   * the same successor refresh token (and a new access token) instead of revoking the family, as
   * long as that successor is unused. Default 0: strict rotation.
   */
  readonly rotationGraceSeconds?: number;
  /** Faults held from the start (see {@link Sandbox.faults}), e.g. from the CLI's `--fault`. */
  readonly faults?: readonly FaultSpec[];
}

/** One sandbox: the app and everything tests may look at or move. */
export interface Sandbox {
  /** The Hono app; `app.request(path, init)` calls it without a server. */
  readonly app: Hono;
  /**
   * The app as a function shaped like the global `fetch` ({@link FetchLike}): pass it as the `fetch`
   * of the token manager or the client to run them against this sandbox in-process, with no server.
   * It is also the handler for `Deno.serve`, `Bun.serve`, `@hono/node-server` or a worker's `fetch`
   * export: those call it with a Request and their own second argument (connection info, the server,
   * bindings), which goes to the app untouched.
   */
  readonly fetch: FetchLike;
  /** The sandbox's clock; `clock.advance(seconds)` works whether or not `testClock` is set. */
  readonly clock: Clock;
  /** The registered clients; register or remove clients at run time. */
  readonly clients: ClientRegistry;
  /**
   * The injected faults: `faults.add({ route, kind, … })` makes the next requests to a route fail
   * (an error status, a slow answer, a dropped connection); see {@link FaultSpec}. Also over HTTP,
   * with the test routes, as `POST /__sandbox/faults`.
   */
  readonly faults: Faults;
  /** Whether the test routes exist. */
  readonly testClock: boolean;
  /** Whether authorization requests are approved at once; may be changed at run time. */
  autoApprove: boolean;
  /** The token-endpoint and revocation calls so far, oldest first (no token values). */
  events(): SandboxEvent[];
  /** Clears the event log; returns how many events were removed. The ledger is cleared on its own. */
  clearEvents(): number;
  /**
   * The refresh-token ledger: `ledger.list()` gives every refresh token presented (by SHA-256
   * fingerprint, never its value) with each presentation's event `seq`, time, actor and outcome,
   * the reuse detections, and the families with how they were revoked; `ledger.clear()` empties it
   * (not the event log). Works with or without `testClock`; over HTTP, `GET /__sandbox/ledger`.
   *
   * @example
   * const { refreshTokens, reuses } = sandbox.ledger.list();
   * expect(reuses).toEqual([]);
   * expect(refreshTokens.filter((t) => t.presentations.length > 1)).toEqual([]);
   * @see RFC 9700 §4.14.2
   */
  readonly ledger: SandboxLedger;
  /**
   * Issues tokens for a registered client directly, without the authorization flow, e.g. to test
   * an API call with a given scope, as `user` (an id of {@link Sandbox.users}; default the first).
   *
   * @throws Error when the client or the user is unknown or a scope is not allowed.
   */
  issueTokens(clientId: string, scopes?: readonly string[], user?: UserId): IssuedTokens;
  /** The users who can sign in, in order (the first is the default), as `GET /api/v1/auth/user` returns them. */
  readonly users: readonly UserRecord[];
  /** Counts of what the sandbox holds in memory. */
  stats(): { families: number; accessTokens: number; refreshTokens: number; codes: number; pendingRequests: number };
  /** Stops the idle eviction timer (it never keeps a process alive; this just ends it early). */
  close(): void;
}

/** How a persisted sandbox is wired: its saved state, and who hears of every change. @internal */
export interface Persistence {
  readonly restore?: SandboxSnapshot;
  readonly onChange: () => void;
}

/**
 * The shape of the global `fetch`, declared here as in the client and token manager packages (which
 * this package does not import), so that `sandbox.fetch` fits their `fetch` options as it is.
 *
 * @example
 * const tm = createTokenManager({ baseUrl: "http://127.0.0.1:4020", fetch: sandbox.fetch, ... });
 * @see https://fetch.spec.whatwg.org/#fetch-method
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A GET route and the 405 of every other method as one handler: with a single handler for a path,
 * Hono calls it directly, without its middleware chain (and its promises). HEAD is answered as GET,
 * as Hono does for a GET route.
 */
function getOnly(route: (c: Context) => Response | Promise<Response>) {
  return (c: Context): Response | Promise<Response> =>
    c.req.method === "GET" || c.req.method === "HEAD" ? route(c) : methodNotAllowed(["GET"]);
}

/** The socket of a request served by `@hono/node-server` (its bindings hold the Node request), if any. */
function nodeSocket(env: unknown): { destroy(): void } | undefined {
  const socket = (env as { incoming?: { socket?: { destroy?: unknown } } } | undefined)?.incoming?.socket;
  return typeof socket?.destroy === "function" ? (socket as { destroy(): void }) : undefined;
}

/** The option names of a `RequestInit`, to tell one from a server's second argument. */
const REQUEST_INIT_KEYS = [
  "method",
  "headers",
  "body",
  "redirect",
  "signal",
  "credentials",
  "mode",
  "cache",
  "referrer",
  "referrerPolicy",
  "integrity",
  "keepalive",
  "duplex",
  "priority",
];

/**
 * Whether `init`, the second argument given with a Request, is a fetch `RequestInit` (override the
 * Request's parts, as `fetch(request, init)` does) rather than a server's own argument.
 */
const isRequestInit = (init: object): boolean => REQUEST_INIT_KEYS.some((key) => key in init);

const JSON_404 = (c: { req: { method: string; path: string } }): Response => notFound(c.req.method, c.req.path);

/**
 * Creates a sandbox tenant.
 *
 * @example
 * const sandbox = createSandbox({
 *   clients: [{ id: "demo", redirectUris: ["http://localhost:5173/callback"] }],
 *   autoApprove: true,
 *   testClock: true,
 * });
 * const res = await sandbox.app.request("/api/v1/auth/user"); // 401
 * @throws ClientConfigError when a client registration is invalid.
 * @throws UserConfigError when `users` is not 1 to 10 000 records each with a distinct `id`, or such a count.
 * @throws HostConfigError when `allowedHosts` holds something other than a host name.
 * @throws RangeError when `rotationGraceSeconds` is not a whole number from 0 to {@link MAX_ROTATION_GRACE_SECONDS}.
 * @throws FaultConfigError when one of `faults` is invalid.
 * @see RFC 6749 §4.1 (authorization code grant), RFC 7636 (PKCE), RFC 7009 (revocation), RFC 6750 (bearer tokens)
 * @see RFC 9700 §4.14.2 (refresh token rotation), RFC 9110 §15.5.20 (421 for a foreign Host)
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  return buildSandbox(options).sandbox;
}

/**
 * {@link createSandbox} with persistence: restores `persistence.restore` and calls
 * `persistence.onChange` after every change; `snapshot()` gives what to save.
 *
 * @internal
 */
export function buildSandbox(
  options: SandboxOptions,
  persistence?: Persistence,
): { sandbox: Sandbox; snapshot(): SandboxSnapshot } {
  const grace = options.rotationGraceSeconds ?? 0;
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_ROTATION_GRACE_SECONDS) {
    throw new RangeError(`rotationGraceSeconds must be an integer from 0 to ${MAX_ROTATION_GRACE_SECONDS}`);
  }
  const onChange = persistence?.onChange ?? (() => undefined);
  const restore = persistence?.restore;
  const clock = createClock(options.now, {
    offsetSeconds: restore?.clockOffsetSeconds ?? 0,
    onAdvance: () => {
      housekeeping.sweep();
      onChange();
    },
  });
  const users = new SandboxUsers(options.users ?? DEMO_USERS);
  // Stored clients first, so that the ones given now replace those with the same id.
  const clients = new Map<string, ClientRegistration>();
  for (const client of [...(restore?.clients ?? []), ...(options.clients ?? [])]) clients.set(client.id, client);
  const state: SandboxState = {
    clock,
    clients: new ClientRegistry(clients.values(), onChange),
    codes: new CodeStore(clock, onChange),
    tokens: new TokenStore(clock, { rotationGraceSeconds: grace, onChange }),
    events: new EventLog(clock),
    ledger: new RefreshLedger(clock),
    pending: new PendingRequests(clock),
    users,
    defaultScopes: options.defaultScopes ?? [USER_SCOPE],
    autoApprove: options.autoApprove ?? false,
  };
  if (restore !== undefined) {
    // A grant stored without a user is the default user's (a state file of one user); one of a user
    // no longer configured is dropped, never answered as another user.
    const userOf = (stored: UserId | undefined): UserId | undefined =>
      stored === undefined ? idOf(users.default) : users.has(stored) ? stored : undefined;
    state.tokens.restore(restore.tokens, userOf);
    state.codes.restore(restore.codes, userOf);
  }
  const housekeeping = new Housekeeping(clock, [
    () => state.tokens.sweep(),
    () => state.codes.sweep((familyId) => state.tokens.hasFamily(familyId)),
    () => state.pending.sweep(),
    () => state.events.sweep(),
    () => state.ledger.sweep(),
  ]);
  if (restore !== undefined) housekeeping.sweep();
  /** An unexpected error (a bug in the sandbox), reported to `onError` and answered with 500. */
  const serverError = (error: unknown): Response => {
    options.onError?.(error);
    return Response.json(
      { error: "server_error", error_description: "The sandbox failed; this is a bug." },
      { status: 500 },
    );
  };
  const testClock = options.testClock ?? false;
  // The headers of every request to the tenant's endpoints, only where the test routes can show them.
  const requests = testClock ? new RequestLog(clock) : undefined;
  const faults = new Faults();
  for (const fault of options.faults ?? []) faults.add(fault);
  const routes = new Hono();
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => oauthError("invalid_request", `The body is larger than ${MAX_BODY_BYTES} bytes.`),
  });

  routes.all("/oauth/authorize", getOnly(authorizeRoute(state)));
  routes.post("/oauth/token", limit, tokenRoute(state));
  routes.all("/oauth/token", () => methodNotAllowed(["POST"]));
  routes.post("/oauth/revoke", limit, revokeRoute(state));
  routes.all("/oauth/revoke", () => methodNotAllowed(["POST"]));
  routes.all("/api/v1/auth/user", getOnly(userRoute(state)));
  routes.post(CONSENT_PATH, limit, consentRoute(state));
  routes.all(CONSENT_PATH, () => methodNotAllowed(["POST"]));
  routes.get("/__sandbox/health", () => Response.json({ status: "ok" }));
  // The test routes, with the test clock only (`requests` is kept exactly then).
  if (requests) {
    routes.use(CLOCK_PATH, limit);
    // POST only: the body limit wraps a body stream it cannot measure, which fails on the server's bodiless DELETE
    routes.post(FAULTS_PATH, limit);
    registerAdminRoutes(routes, state, faults, requests);
    routes.all(CLOCK_PATH, () => methodNotAllowed(["GET", "POST"]));
    routes.all(EVENTS_PATH, () => methodNotAllowed(["GET", "DELETE"]));
    routes.all(LEDGER_PATH, () => methodNotAllowed(["GET", "DELETE"]));
    routes.all(REQUESTS_PATH, () => methodNotAllowed(["GET", "DELETE"]));
    routes.all(FAULTS_PATH, () => methodNotAllowed(["GET", "POST", "DELETE"]));
    routes.all(USERS_PATH, () => methodNotAllowed(["GET"]));
  }
  routes.notFound(JSON_404);
  routes.onError((error) => {
    if (error instanceof BadRequestError) return oauthError("invalid_request", error.message);
    return serverError(error);
  });

  const refuseHost = hostCheck(options.allowedHosts ?? []);
  const browsers = cors(state.clients);
  /** Errors the front door throws on purpose, for the caller of `fetch` (a dropped connection). */
  const forCaller = new WeakSet<object>();
  const rejectWith = (error: unknown): Promise<never> => {
    if (typeof error === "object" && error !== null) forCaller.add(error);
    return Promise.reject(error);
  };

  /** What a fault that caught the request answers; `route` answers it normally. */
  const faulted = (
    fault: Fault,
    request: Request,
    env: unknown,
    route: () => Response | Promise<Response>,
  ): Response | Promise<Response> => {
    const socket = nodeSocket(env);
    switch (fault.kind) {
      case "status":
        return faultResponse(fault);
      case "drop":
        if (socket === undefined) return rejectWith(droppedConnection(fault));
        socket.destroy();
        // never sent: the connection is gone
        return new Response(null, { status: 500 });
      case "lose":
        // The route runs to the end (a refresh rotates), then the answer never leaves.
        return Promise.resolve(route()).then(() => {
          if (socket === undefined) return rejectWith(droppedConnection(fault));
          socket.destroy();
          return new Response(null, { status: 500 });
        });
      case "slow":
        return delay(fault.delayMs ?? 0, request.signal).then((waited) => {
          if (waited) return route();
          // The caller gave up while the answer was held back: in-process, `fetch` rejects with
          // the signal's reason; on a server the client is gone and nothing is sent.
          return socket === undefined ? rejectWith(request.signal.reason) : new Response(null, { status: 499 });
        });
    }
  };

  /**
   * The front door of every request, around the routes: the Host check, the housekeeping, CORS and
   * the injected faults, as plain synchronous calls. As Hono middleware each of them was awaited on
   * every request, about a fifth of the sandbox's throughput; now a request whose route answers at
   * once (GET /api/v1/auth/user) is answered without a promise.
   */
  const frontDoor = (request: Request, path: string, env: unknown): Response | Promise<Response> => {
    const refused = refuseHost(request.url);
    if (refused !== undefined) return refused;
    housekeeping.startTimer();
    housekeeping.sweepIfDue();
    requests?.record(request, path);
    let origin: string | undefined;
    if (corsPath(path)) {
      const preflight = browsers.preflight(request);
      if (preflight !== undefined) return preflight;
      origin = browsers.allowedOrigin(request);
    }
    const route = (): Response | Promise<Response> => routes.fetch(request, env);
    const fault = faults.take(request.method, path);
    const answer = fault === undefined ? route() : faulted(fault, request, env, route);
    if (origin === undefined) return answer;
    const allowed = origin;
    return answer instanceof Promise
      ? answer.then((response) => browsers.allow(response, allowed))
      : browsers.allow(answer, allowed);
  };

  const app = new Hono();
  // One handler for every request: Hono calls it without its middleware chain.
  app.all("*", (c) => frontDoor(c.req.raw, c.req.path, c.env));
  app.onError((error) => {
    if (forCaller.has(error)) throw error;
    return serverError(error);
  });

  const sandbox: Sandbox = {
    app,
    fetch: async (input, init) => {
      if (!(input instanceof Request)) return app.fetch(new Request(input, init));
      if (init !== undefined && isRequestInit(init)) return app.fetch(new Request(input, init));
      // A server's call (Bun's server, Deno's connection info, node-server's { incoming, outgoing }):
      // Hono takes that argument as its `env`.
      return app.fetch(input, init);
    },
    clock,
    clients: state.clients,
    faults,
    testClock,
    get autoApprove() {
      return state.autoApprove;
    },
    set autoApprove(value: boolean) {
      state.autoApprove = value;
    },
    events: () => state.events.list(),
    clearEvents: () => state.events.clear(),
    ledger: {
      list: () => state.ledger.list(),
      clear: () => state.ledger.clear(),
    },
    users: users.list(),
    issueTokens(clientId, scopes, user = idOf(users.default)) {
      const client = state.clients.get(clientId);
      if (client === undefined) throw new Error(`The client ${clientId} is not registered.`);
      const owner = users.get(user);
      if (owner === undefined) throw new Error(`The user ${String(user)} is not a user of this sandbox.`);
      let granted = client.scopes ?? state.defaultScopes;
      if (scopes !== undefined) {
        const checked = checkScope(scopes.join(" "), client);
        if (!checked.ok) throw new Error(checked.description);
        granted = checked.scopes;
      }
      const tokens = state.tokens.issue(clientId, granted, idOf(owner));
      state.ledger.familyIssued(tokens.familyId, tokens.user);
      return tokens;
    },
    stats: () => ({ ...state.tokens.stats(), codes: state.codes.size, pendingRequests: state.pending.size }),
    close: () => housekeeping.stop(),
  };
  const snapshot = (): SandboxSnapshot => ({
    format: "tenant-sandbox-state",
    version: SNAPSHOT_VERSION,
    clockOffsetSeconds: clock.offsetSeconds,
    clients: state.clients.list(),
    codes: state.codes.snapshot(),
    tokens: state.tokens.snapshot(),
  });
  return { sandbox, snapshot };
}
