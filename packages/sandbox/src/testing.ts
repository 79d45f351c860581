/**
 * `@tenant-integration/sandbox/testing`: one call for a signed-in test setup. An in-process sandbox
 * tenant, a token manager signed in to it (the sandbox approves at once, no browser), and a client
 * using that manager, all on `sandbox.fetch` (no server, no port) and all on the sandbox's one clock.
 *
 * This entry point imports `@tenant-integration/token-manager` and `@tenant-integration/client`
 * (optional peer dependencies of this package: install them to use it). The main entry point
 * imports neither.
 *
 * @module
 */
import { createTenantClient, type TenantClient, type TenantClientOptions } from "@tenant-integration/client";
import {
  createTokenManager,
  type Lock,
  refreshIntents,
  type SessionInfo,
  type TokenManager,
  type TokenManagerOptions,
} from "@tenant-integration/token-manager";
import type { Scope } from "@tenant-integration/types";
import { createSandbox, type FetchLike, type Sandbox, type SandboxOptions } from "./app.js";
import type { SandboxEvent } from "./events.js";
import { USER_PARAMETER, type UserId } from "./users.js";

/**
 * Options of {@link createTestTenant}; every one has a default.
 *
 * @example
 * ```ts
 * await createTestTenant({ scopes: ["tickets:read"], tokenManager: { logger: logSessionTo(console) }, client: { headers: { "X-Test": "1" } } });
 * ```
 * @see RFC 6749 §3.3 (scope)
 */
export interface TestTenantOptions {
  /** The scopes the token manager asks for and the sandbox grants (default `["profile:read"]`). */
  readonly scopes?: readonly Scope[];
  /** Sign in before returning (default `true`); with `false`, call {@link TestTenant.signIn} yourself. */
  readonly signIn?: boolean;
  /**
   * The id of the sandbox user to sign in as (default the sandbox's first user, 42 unless
   * `sandbox.users` says otherwise): `GET /api/v1/auth/user` answers the manager's tokens with this user.
   */
  readonly user?: UserId;
  /** The loopback address both use (default `"http://127.0.0.1:4020"`); nothing listens there, every request stays in-process. */
  readonly baseUrl?: string;
  /** The OAuth client registered in the sandbox (default `"test-integration"`). */
  readonly clientId?: string;
  /** Its redirect URI (default `"http://127.0.0.1:53682/callback"`); nothing needs to listen there either. */
  readonly redirectUri?: string;
  /** The clock's base time source in milliseconds (default `Date.now`); {@link TestTenant.advance} adds to it. */
  readonly now?: () => number;
  /** More sandbox options (`users`, `defaultScopes`, `onError`, more `clients`…). */
  readonly sandbox?: Omit<SandboxOptions, "autoApprove" | "now">;
  /** More token manager options (`storage`, `logger: logSessionTo(console)`, `refreshLeewayMs`, `retry`…). */
  readonly tokenManager?: Omit<
    Partial<TokenManagerOptions>,
    "baseUrl" | "clientId" | "redirectUri" | "scopes" | "fetch" | "now"
  >;
  /** More client options (`retry: retryPolicy()`, `timeout: timeoutAfter(ms)`, `logger: logTo(console)`, `headers`, `middleware`). */
  readonly client?: Omit<TenantClientOptions, "baseUrl" | "auth" | "fetch">;
  /**
   * Wraps the sandbox's in-process fetch; the token manager and the client both send through the
   * wrapper, e.g. to record, delay or fail requests on the way. (To make the sandbox itself answer
   * with an error, slowly or not at all, use `tenant.sandbox.faults`.)
   *
   * @example
   * ```ts
   * const sent: string[] = [];
   * await createTestTenant({ fetch: (sandboxFetch) => (input, init) => { sent.push(new Request(input, init).url); return sandboxFetch(input, init); } });
   * ```
   */
  readonly fetch?: (sandboxFetch: FetchLike) => FetchLike;
}

/**
 * What {@link createTestTenant} returns: the three parts, wired together, and the controls of the shared clock.
 *
 * @example
 * ```ts
 * const tenant = await createTestTenant();
 * await tenant.tokenManager.revoke();
 * await tenant.signIn(); // signed in again
 * ```
 * @see RFC 6749 §4.1, §6; RFC 7009
 */
export interface TestTenant {
  /** The in-process sandbox tenant. */
  readonly sandbox: Sandbox;
  /** A token manager on `sandbox.fetch` (through the `fetch` wrapper, if given) and the sandbox's clock; signed in unless `signIn: false`. */
  readonly tokenManager: TokenManager;
  /** A client with `auth` = {@link TestTenant.tokenManager}, on `sandbox.fetch` (through the `fetch` wrapper, if given). */
  readonly client: TenantClient;
  /** The loopback base URL both use; no request to it leaves the process. */
  readonly baseUrl: string;
  /** The OAuth client the sandbox has registered for the token manager. */
  readonly clientId: string;
  /** That client's redirect URI. */
  readonly redirectUri: string;
  /**
   * Moves the one shared clock forward (the sandbox's tokens and the manager's `now` alike) and
   * returns the new time in milliseconds.
   *
   * @throws RangeError when `seconds` is negative, not finite, or more than ten years.
   */
  advance(seconds: number): number;
  /** The sandbox's token and revoke events so far, oldest first (no token values). */
  events(): SandboxEvent[];
  /**
   * Signs the token manager in again (after `revoke()`, `signOut()` or an ended session): authorize,
   * approved at once by the sandbox, then the code exchange. As `options.user` when given (a sandbox
   * user's id), else as the tenant's `user` option.
   *
   * @throws {@link TestTenantError} `SIGN_IN_FAILED` when the sandbox does not approve (e.g. a scope it does not grant, or a user it does not have).
   */
  signIn(options?: { readonly user?: UserId }): Promise<SessionInfo>;
}

/**
 * The test tenant could not sign in (`SIGN_IN_FAILED`): the sandbox answered the authorization
 * request with something other than a redirect carrying a code; or a sandbox's clock cannot be
 * followed (`SANDBOX_FAILED`, {@link followSandboxClock}). `message` says why (no token or code).
 *
 * @example
 * ```ts
 * await expect(createTestTenant({ scopes: ["no:such-scope" as Scope] })).rejects.toThrow(TestTenantError);
 * ```
 * @see RFC 6749 §4.1.2.1 (authorization error response)
 */
export class TestTenantError extends Error {
  override name = "TestTenantError";
  /**
   * The stable code: `SIGN_IN_FAILED` (the sandbox did not approve), or `SANDBOX_FAILED` (a sandbox
   * that {@link followSandboxClock} cannot follow), the Go and Python test kits' codes.
   */
  readonly code: "SIGN_IN_FAILED" | "SANDBOX_FAILED";
  constructor(message: string, options?: ErrorOptions & { code?: "SIGN_IN_FAILED" | "SANDBOX_FAILED" }) {
    super(message, options);
    this.code = options?.code ?? "SIGN_IN_FAILED";
  }
}

const DEFAULT_BASE_URL = "http://127.0.0.1:4020";
const DEFAULT_CLIENT_ID = "test-integration";
const DEFAULT_REDIRECT_URI = "http://127.0.0.1:53682/callback";

/**
 * Creates an in-process test tenant: a sandbox, a token manager signed in to it with the chosen
 * scopes, and a client on that manager. Nothing listens on a port; `tenant.advance(seconds)` moves
 * the clock of the sandbox and of the manager together, so expiry and proactive refresh are tested
 * without waiting.
 *
 * @throws {@link TestTenantError} `SIGN_IN_FAILED` when the sandbox does not approve the sign-in.
 * @example
 * ```ts
 * import { createTestTenant } from "@tenant-integration/sandbox/testing";
 *
 * const tenant = await createTestTenant({ scopes: ["profile:read"] });
 * tenant.advance(16 * 60); // past the 15-minute access token
 * const { data } = await tenant.client.GET("/api/v1/auth/user"); // refreshed first
 * tenant.events().filter((e) => e.grantType === "refresh_token"); // one refresh
 * ```
 * @see RFC 6749 §4.1 (authorization code grant), §6 (refresh); RFC 7636 (PKCE); RFC 7009 (revocation)
 */
export async function createTestTenant(options: TestTenantOptions = {}): Promise<TestTenant> {
  const {
    scopes = ["profile:read"],
    baseUrl = DEFAULT_BASE_URL,
    clientId = DEFAULT_CLIENT_ID,
    redirectUri = DEFAULT_REDIRECT_URI,
  } = options;
  const sandbox = createSandbox({
    ...options.sandbox,
    clients: [...(options.sandbox?.clients ?? []), { id: clientId, redirectUris: [redirectUri] }],
    // Every request stays in-process, so the tenant's own name (a real one, as users pass it) is safe
    // to accept besides the loopback names the Host check always accepts.
    allowedHosts: [...(options.sandbox?.allowedHosts ?? []), new URL(baseUrl).hostname],
    // Headless approval: the authorization request is answered with the redirect at once.
    autoApprove: true,
    ...(options.now && { now: options.now }),
  });
  const fetch = options.fetch === undefined ? sandbox.fetch : options.fetch(sandbox.fetch);
  const managerOptions = options.tokenManager ?? {};
  const tokenManager = createTokenManager({
    // Tenants of one test run do not wait on each other's refreshes, unless told to share a lock. A
    // lock of one's own comes with the refresh intents (the manager refuses it without them).
    ...(managerOptions.storage?.lock === undefined && { lock: tenantLock(), refreshIntents }),
    ...managerOptions,
    baseUrl,
    clientId,
    redirectUri,
    scopes,
    fetch,
    now: sandbox.clock.now,
  });
  const client = createTenantClient({ ...options.client, baseUrl, auth: tokenManager, fetch });

  const signIn = async ({ user = options.user }: { readonly user?: UserId } = {}): Promise<SessionInfo> => {
    const { url } = await tokenManager.beginAuthorization();
    // The sandbox-only parameter that approves as this user; a real tenant would ignore it.
    const authorize = new URL(url);
    if (user !== undefined) authorize.searchParams.set(USER_PARAMETER, String(user));
    const answer = await sandbox.fetch(authorize, { redirect: "manual" });
    const location = answer.headers.get("location");
    const callback = location === null ? undefined : new URL(location, authorize);
    if (answer.status !== 302 || !callback?.searchParams.has("code")) {
      const reason =
        callback?.searchParams.get("error_description") ?? callback?.searchParams.get("error") ?? (await answer.text());
      throw new TestTenantError(`The sandbox did not approve the sign-in (HTTP ${answer.status}): ${reason}`);
    }
    return tokenManager.completeAuthorization(callback);
  };

  if (options.signIn !== false) await signIn();
  return {
    sandbox,
    tokenManager,
    client,
    baseUrl,
    clientId,
    redirectUri,
    advance: (seconds) => sandbox.clock.advance(seconds),
    events: () => sandbox.events(),
    signIn,
  };
}

/** One refresh at a time within one tenant: a promise chain, so a failed task does not block the next. */
function tenantLock(): Lock {
  let tail: Promise<unknown> = Promise.resolve();
  return (_name, task) => {
    // In one process nothing else can take the lock: the task runs without a HeldLock to check.
    const run = tail.then(
      () => task(),
      () => task(),
    );
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * Options of {@link followSandboxClock}.
 *
 * @example
 * ```ts
 * await followSandboxClock(process.env.TENANT_URL!, { intervalMs: 20 });
 * ```
 */
export interface FollowSandboxClockOptions {
  /** How often the sandbox's clock is read in the background, in milliseconds (default 100). */
  readonly intervalMs?: number;
  /** The fetch the reads use (default the global `fetch`). */
  readonly fetch?: FetchLike;
}

/**
 * The test clock of a sandbox this process did not start, followed by its URL: what
 * {@link followSandboxClock} returns. Give `now` to the token manager under test.
 */
export interface FollowedSandboxClock {
  /** The sandbox's time as last read, in milliseconds since the epoch: `Date.now()` plus its offset. */
  now(): number;
  /** How far, in seconds, the sandbox's clock has been moved forward, as last read. */
  readonly offsetSeconds: number;
  /**
   * Reads the sandbox's clock now (`GET /__sandbox/clock`) and returns its time in milliseconds.
   *
   * @throws {@link TestTenantError} `SANDBOX_FAILED` (rejects) when the sandbox does not answer with its clock.
   */
  sync(): Promise<number>;
  /** Stops the background reads (not the sandbox). */
  close(): void;
}

/** A sandbox that could not be followed: it did not answer, or runs without its test clock. */
function sandboxFailed(url: string, why: string): TestTenantError {
  return new TestTenantError(`Cannot follow the clock of the sandbox at ${url}: ${why}`, { code: "SANDBOX_FAILED" });
}

/**
 * Follows the test clock of a sandbox that another process started (a test runner, `tenant-sandbox
 * --test-clock` in CI, the Go or Python test kit): the offset is read from `GET /__sandbox/clock` at
 * once, every `intervalMs` in the background (the timer does not keep the process alive), and at
 * each `sync()`. So every process's moves of the clock (`POST /__sandbox/clock`) reach this one
 * within an interval, or at once after `sync()`. The offset only moves forward, as the sandbox's.
 * The same follower as the Go kit's `tenanttest.FollowClock` and the Python kit's
 * `follow_sandbox_clock`.
 *
 * @throws {@link TestTenantError} with code `SANDBOX_FAILED` (rejects) when the sandbox does not
 * answer with its clock (not a sandbox, or started without `--test-clock`).
 * @example
 * ```ts
 * import { createTokenManager } from "@tenant-integration/token-manager";
 * import { followSandboxClock } from "@tenant-integration/sandbox/testing";
 *
 * const clock = await followSandboxClock("http://127.0.0.1:4020");
 * const tokenManager = createTokenManager({ baseUrl: "http://127.0.0.1:4020", clientId: "test-integration",
 *   redirectUri: "http://127.0.0.1:53682/callback", scopes: ["profile:read"], now: clock.now });
 * ```
 * @see RFC 6749 §4.2.2 (expires_in, which the test clock lets tests pass without waiting)
 */
export async function followSandboxClock(
  baseUrl: string | URL,
  options: FollowSandboxClockOptions = {},
): Promise<FollowedSandboxClock> {
  const url = String(baseUrl).replace(/\/+$/, "");
  const fetch = options.fetch ?? globalThis.fetch;
  let offsetMs = 0;
  const sync = async (): Promise<number> => {
    let body: { offsetSeconds?: unknown };
    try {
      const answer = await fetch(`${url}/__sandbox/clock`);
      if (!answer.ok)
        throw sandboxFailed(url, `GET /__sandbox/clock answered HTTP ${answer.status}; start it with --test-clock`);
      body = (await answer.json()) as { offsetSeconds?: unknown };
    } catch (error) {
      throw error instanceof TestTenantError ? error : sandboxFailed(url, String(error));
    }
    if (typeof body.offsetSeconds !== "number" || !Number.isFinite(body.offsetSeconds)) {
      throw sandboxFailed(url, "its answer holds no clock; start it with --test-clock");
    }
    offsetMs = Math.max(offsetMs, Math.round(body.offsetSeconds * 1000));
    return Date.now() + offsetMs;
  };
  await sync();
  // A read that fails keeps the last offset; the next one tries again.
  const timer = setInterval(() => sync().catch(() => undefined), options.intervalMs ?? 100);
  (timer as { unref?(): void }).unref?.();
  return {
    now: () => Date.now() + offsetMs,
    get offsetSeconds() {
      return offsetMs / 1000;
    },
    sync,
    close: () => clearInterval(timer),
  };
}
