/**
 * A server's sign-in as Web-standard `Request` → `Response` handlers: "start sign-in" (the redirect
 * to the tenant, with the browser binding cookie) and the callback (checked, exchanged, stored under
 * the session the sign-in was begun for). They fit every framework that speaks `Request` and
 * `Response`: Hono, Next.js route handlers, Deno, Bun, Cloudflare Workers, and Express or Fastify
 * through an adapter. The same concept as the Go kit's `signinhttp` and the Python kit's ASGI
 * handlers (spec/token-store/README.md, "Binding a sign-in to its browser").
 *
 * @see RFC 6749 §4.1.1, §4.1.2, §10.12; RFC 9700 §4.7.1 (login CSRF); RFC 6265bis (cookie prefixes, SameSite)
 */
import type { Scope } from "@tenant-integration/types";
import { BINDING_FORM } from "./binding.js";
import { TokenManagerError } from "./errors.js";
import { parseUrl } from "./options.js";
import type { Sessions, SignedIn } from "./sessions.js";

/** Options of {@link signInHandlers}. */
export interface SignInHandlersOptions {
  /**
   * The app's logged-in user for this request, as the session id (from the app's own login: its
   * session cookie, its auth header); `undefined` or `null` when nobody is logged in (answered 401).
   * Never read the session id from the query string: anyone could name anyone's.
   */
  sessionOf(request: Request): string | null | undefined | Promise<string | null | undefined>;
  /**
   * The app's own browser binding for this request (its server session's id: a value only that
   * browser's requests carry), used instead of the binding cookie. Absent: the handlers set and read
   * the cookie `__Host-tenant-signin` (`tenant-signin` for an http redirect URI).
   */
  bindingOf?(request: Request): string | null | undefined | Promise<string | null | undefined>;
  /** Where the callback sends the browser once signed in (default `/`), or a function of the session signed in. */
  afterSignIn?: string | ((signedIn: SignedIn, request: Request) => string);
  /**
   * Complete a callback begun for any session, not only the logged-in user's (default `false`: the
   * callback requires `sessionOf(request)` to be the session the sign-in was begun for). For an app
   * whose login does not reach the callback (a `SameSite=Strict` session cookie).
   */
  anySession?: boolean;
  /** The scopes to ask for (default: the sessions' `scopes`). */
  scopes?: readonly Scope[];
  /** Called with every error before its answer (400, 401, 503): log it, count it. Its own failure is ignored. */
  onError?(error: unknown, request: Request): void;
}

/** The two handlers of {@link signInHandlers}. */
export interface SignInHandlers {
  /** Starts a sign-in for the logged-in user: `303` to the tenant's authorize URL, with the binding cookie. */
  start(request: Request): Promise<Response>;
  /** The callback at the redirect URI's path: checks, exchanges, stores, then `303` to `afterSignIn`. */
  callback(request: Request): Promise<Response>;
}

/** An error of the handlers themselves (nobody logged in, wrong method or path), with its answer's status. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The codes of a failure that may pass: answered 503 (the request may work later). */
const LATER = new Set(["STORAGE_FAILED", "LOCK_TIMEOUT", "TRANSIENT"]);

/**
 * The binding cookie's name for a redirect URI: `__Host-tenant-signin` on https (the prefix makes the
 * browser refuse it without `Secure`, with a `Domain`, or with another `Path`), `tenant-signin` on
 * http (loopback development, where a cookie cannot be `Secure`).
 */
export const bindingCookieName = (redirectUri: string): string =>
  redirectUri.startsWith("https:") ? "__Host-tenant-signin" : "tenant-signin";

/**
 * The `Set-Cookie` value of the binding cookie: `HttpOnly`, `SameSite=Lax` (the callback is a
 * top-level cross-site GET, which `Strict` would not send it with), `Path=/`, `Secure` on https,
 * `Max-Age` the pending lifetime in seconds, rounded up.
 *
 * @example
 * ```ts
 * bindingCookie("https://app.example.org/cb", 600_000, binding);
 * // "__Host-tenant-signin=<binding>; Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure"
 * ```
 * @see RFC 9700 §4.7.1; RFC 6265bis §4.1.3.2 (`__Host-`), §5.4.7 (SameSite)
 */
export function bindingCookie(redirectUri: string, pendingLifetimeMs: number, binding: string): string {
  const secure = redirectUri.startsWith("https:") ? "; Secure" : "";
  const maxAge = Math.ceil(pendingLifetimeMs / 1000);
  return `${bindingCookieName(redirectUri)}=${binding}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

/** The value of the cookie `name` in the request, when it has the form of a binding; else `undefined`. */
export function bindingFromCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      if (BINDING_FORM.test(value)) return value;
    }
  }
  return undefined;
}

/** Why a sign-in was refused, in words for the browser, for the codes a person can act on (Go's `signinhttp` says the same). */
const REASONS: Readonly<Record<string, string>> = {
  NO_PENDING_SIGN_IN: "it was already used, or has expired",
  STATE_EXPIRED: "it expired",
  INVALID_SESSION_ID: "the user's id cannot name a session",
};

/**
 * The reason of a refusal of the kit's: `STATE_MISMATCH`'s own detail ("the sign-in was started in
 * another browser", "… for another session"), which holds no state, or the words of {@link REASONS}.
 */
function reason(error: unknown, code: string): string | undefined {
  if (!(error instanceof TokenManagerError)) return undefined;
  if (code === "STATE_MISMATCH" && error.message.startsWith(`${code}: `)) return error.message.slice(code.length + 2);
  if (code === "AUTHORIZATION_DENIED" && error.error) return `access was not granted (${error.error})`;
  return REASONS[code];
}

/** Answers a refusal or failure with a short text holding no token, code, state or binding. */
function failed(error: unknown, request: Request, options: SignInHandlersOptions): Response {
  try {
    options.onError?.(error, request);
  } catch {
    // the hook's failure is its own
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  const status = error instanceof Refusal ? error.status : LATER.has(String(code)) ? 503 : 400;
  const named = typeof code === "string" ? code : "error";
  const why = reason(error, named);
  const text =
    error instanceof Refusal
      ? error.message
      : status === 503
        ? `Sign-in could not be completed now (${String(code)}); try again.`
        : `Sign-in failed (${named})${why ? `: ${why}` : ""}; start it again.`;
  return new Response(text, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}

/** The logged-in user's session id, or a 401 refusal. */
async function loggedIn(request: Request, options: SignInHandlersOptions): Promise<string> {
  const session = await options.sessionOf(request);
  if (session === undefined || session === null || session === "") throw new Refusal(401, "Log in first.");
  return session;
}

/** {@link SignInHandlers.start}. */
async function start(sessions: Sessions, options: SignInHandlersOptions, request: Request): Promise<Response> {
  try {
    if (request.method !== "GET" && request.method !== "POST") throw new Refusal(405, "Use GET or POST.");
    const session = await loggedIn(request, options);
    const own = options.bindingOf ? ((await options.bindingOf(request)) ?? undefined) : undefined;
    if (options.bindingOf && !own) throw new Refusal(401, "Log in first.");
    const name = bindingCookieName(sessions.redirectUri);
    const browser = own ?? bindingFromCookie(request, name);
    const begun = await sessions.beginSignIn({
      session,
      browser,
      ...(options.scopes ? { scopes: options.scopes } : {}),
    });
    const headers = new Headers({ location: begun.url, "cache-control": "no-store" });
    // Set at every start (the same value when a valid one came), so that its Max-Age counts from the newest sign-in.
    if (!own) headers.set("set-cookie", bindingCookie(sessions.redirectUri, sessions.pendingLifetimeMs, begun.browser));
    return new Response(null, { status: 303, headers });
  } catch (e) {
    return failed(e, request, options);
  }
}

/** {@link SignInHandlers.callback}. */
async function callback(sessions: Sessions, options: SignInHandlersOptions, request: Request): Promise<Response> {
  try {
    if (request.method !== "GET") throw new Refusal(405, "Use GET.");
    const configured = parseUrl(sessions.redirectUri, "redirectUri");
    const asked = new URL(request.url);
    if (asked.pathname !== configured.pathname) throw new Refusal(404, "Not found.");
    // The public callback URL is the configured one, never rebuilt from Host or X-Forwarded-* headers.
    const url = new URL(configured.href.split("?")[0] as string);
    url.search = asked.search;
    const session = options.anySession ? undefined : await loggedIn(request, options);
    const browser = options.bindingOf
      ? ((await options.bindingOf(request)) ?? undefined)
      : bindingFromCookie(request, bindingCookieName(sessions.redirectUri));
    const signedIn = await sessions.completeSignIn(url, { browser, session });
    const after = options.afterSignIn ?? "/";
    const location = typeof after === "function" ? after(signedIn, request) : after;
    return new Response(null, {
      status: 303,
      headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" },
    });
  } catch (e) {
    const answer = failed(e, request, options);
    answer.headers.set("referrer-policy", "no-referrer");
    return answer;
  }
}

/**
 * Makes the start and callback handlers of a server's sign-in on `sessions`: Web-standard
 * `Request` → `Response`.
 *
 * - **start** (GET or POST): the logged-in user's session (`sessionOf`; 401 without one) begins a
 *   sign-in bound to this browser (the binding cookie, reused when it has a valid one, so two tabs
 *   share it; or `bindingOf`), and the answer is `303` to the tenant's authorize URL.
 * - **callback** (GET, at the redirect URI's path; 404 elsewhere): the callback URL is rebuilt as the
 *   configured redirect URI plus the request's query (never from `Host` or `X-Forwarded-*`), the
 *   pending sign-in of its state is taken, refused before any exchange when begun in another browser
 *   or for another session than `sessionOf(request)` (unless `anySession`), the code exchanged and
 *   the tokens stored; then `303` to `afterSignIn`.
 * - Errors: `onError`, then `401` (nobody logged in), `503` (`STORAGE_FAILED`, `LOCK_TIMEOUT`,
 *   `TRANSIENT`: it may work later) or `400` (any other refusal), with a short text holding no
 *   token, code, state or binding: the error's code and, for the refusals a person can act on, why
 *   in words ("the sign-in was started in another browser"). Every answer has `Cache-Control: no-store`; the callback's also
 *   `Referrer-Policy: no-referrer` (its URL held a code).
 *
 * @example
 * ```ts
 * // Hono
 * const signIn = signInHandlers(sessions, { sessionOf: (req) => userIdFromAppSession(req) });
 * app.get("/connect", (c) => signIn.start(c.req.raw));
 * app.get("/tenant/callback", (c) => signIn.callback(c.req.raw));
 * // Next.js route handler (app/tenant/callback/route.ts)
 * export const GET = (request: Request) => signIn.callback(request);
 * ```
 * @see RFC 6749 §4.1, §10.12; RFC 9700 §4.7.1
 */
export function signInHandlers(sessions: Sessions, options: SignInHandlersOptions): SignInHandlers {
  return {
    start: (request) => start(sessions, options, request),
    callback: (request) => callback(sessions, options, request),
  };
}
