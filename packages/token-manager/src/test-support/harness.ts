/**
 * Test harness: an injected fetch that records every request, a clock, and a manager wired to them.
 * Not part of the package (excluded from the build).
 */
import { createSessionManager } from "../sessions.js";
import { createTokenManager } from "../token-manager.js";
import type { TokenManager, TokenManagerOptions } from "../types.js";
import { pendingKey } from "../pending.js";
import { memoryStorage } from "../storage/memory.js";
import type { TokenStorage } from "../storage/storage.js";

export const BASE = "https://acme.tenant.test";
export const CLIENT_ID = "demo-integration";
export const REDIRECT_URI = "http://127.0.0.1:53682/callback";

export interface RecordedCall {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly redirect: string | undefined;
  /** When it was sent, on the monotonic clock (`performance.now()`). */
  readonly at: number;
}

export type Handler = (call: RecordedCall) => Response | Promise<Response>;

/** A fetch that records calls and answers with `handler`. */
export function recordingFetch(handler: Handler) {
  const calls: RecordedCall[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const call: RecordedCall = {
      url: String(input),
      method: init.method ?? "GET",
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: typeof init.body === "string" ? init.body : "",
      redirect: init.redirect,
      at: performance.now(),
    };
    calls.push(call);
    return handler(call);
  };
  return { fetch, calls };
}

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

export function tokens(access: string, refresh?: string, expiresIn = 900): Response {
  return json(200, {
    access_token: access,
    token_type: "Bearer",
    expires_in: expiresIn,
    ...(refresh ? { refresh_token: refresh } : {}),
  });
}

export function clock(start = 1_700_000_000_000) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

export function bodyOf(call: RecordedCall): Record<string, unknown> {
  return JSON.parse(call.body) as Record<string, unknown>;
}

/**
 * A small token server: the code exchange issues at_1/rt_1, each refresh issues the next pair
 * (rotating), unless `next` is set to answer otherwise.
 */
export interface TokenServer {
  refreshes: number;
  queue: (() => Response | Promise<Response>)[];
  handler: Handler;
}

export function tokenServer(): TokenServer {
  let n = 0;
  const server: TokenServer = {
    refreshes: 0,
    /** Answers the next token request instead of the default. */
    queue: [],
    handler: async (call) => {
      const queued = server.queue.shift();
      if (queued) return queued();
      if (call.url.endsWith("/oauth/revoke")) return new Response(null, { status: 200 });
      const body = bodyOf(call);
      if (body["grant_type"] === "refresh_token") server.refreshes++;
      n++;
      return tokens(`at_${n}`, `rt_${n}`);
    },
  };
  return server;
}

export interface Setup {
  tm: TokenManager;
  calls: RecordedCall[];
  clock: ReturnType<typeof clock>;
  storage: TokenStorage;
  server: TokenServer;
}

/**
 * A manager on a token server, a recording fetch, a clock and memory storage; with `sessionId`, the
 * manager of that session (`createSessionManager`).
 */
export function setup(
  { sessionId, ...overrides }: Partial<TokenManagerOptions> & { sessionId?: string } = {},
  server = tokenServer(),
): Setup {
  const c = clock();
  const { fetch, calls } = recordingFetch((call) => server.handler(call));
  const storage = overrides.storage ?? memoryStorage();
  const options: TokenManagerOptions = {
    baseUrl: BASE,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: ["profile:read", "tickets:read"],
    storage,
    fetch,
    now: c.now,
    retry: { attempts: 3, baseDelayMs: 0 },
    ...overrides,
  };
  const tm = sessionId === undefined ? createTokenManager(options) : createSessionManager({ ...options, sessionId });
  return { tm, calls, clock: c, storage, server };
}

/** Runs the whole sign-in against the fake server and returns the callback URL used. */
export async function signIn(tm: TokenManager, extra = ""): Promise<string> {
  const { url } = await tm.beginAuthorization();
  const state = new URL(url).searchParams.get("state") ?? "";
  const callback = `${REDIRECT_URI}?code=code_abc&state=${encodeURIComponent(state)}${extra}`;
  await tm.completeAuthorization(callback);
  return callback;
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The storage name of the pending sign-in of `state` (spec/token-store/README.md, "Pending sign-ins by state"). */
export const pendingName = async (state: string): Promise<string> =>
  `tenant-integration:${BASE}:${CLIENT_ID}:pending:${await pendingKey(state)}`;
