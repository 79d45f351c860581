/**
 * Sign-in: the authorization request with PKCE and a state, kept as a pending sign-in found by its
 * state, and the callback, checked (browser binding and session included) and exchanged for tokens.
 * The same module as the Python kit's `_sign_in.py`.
 *
 * @see RFC 6749 §3.1.2, §4.1.1–§4.1.3, §10.12; RFC 7636 §4.3, §4.5; RFC 9700 §4.4 (mix-up), §4.7.1 (login CSRF)
 */
import { describe, fail } from "./errors.js";
import type { Scope } from "@tenant-integration/types";
import { checkScopes, known, type ManagerState, store, whereIs } from "./manager-state.js";
import { callbackTarget, parseUrl } from "./options.js";
import { parsePending, pendingKey, putPending, takePending } from "./pending.js";
import { createPkcePair } from "./pkce.js";
import { commit } from "./session.js";
import { constantTimeEqual, createState } from "./state.js";
import { announce } from "./tabs.js";
import { authorizationCodeGrantRequest, requestTokens } from "./token-request.js";
import { parseOAuthError } from "./token-response.js";
import type { AuthorizationOptions, AuthorizationRequest, SessionInfo } from "./types.js";

/** What a sign-in is begun for, beside its scopes. */
export interface SignInFor {
  readonly scopes?: readonly Scope[] | undefined;
  /** The session the tokens will be stored under. */
  readonly sessionId?: string | undefined;
  /** The browser binding's hash (`browser` of the record), for a server's sign-in. */
  readonly browser?: string | undefined;
}

/**
 * Creates a PKCE pair and a state, stores them as a pending sign-in of its own, found at the
 * callback by its state (any number may be in flight), and returns the authorize URL with its seven
 * parameters.
 */
export async function beginSignIn(
  state: ManagerState,
  { scopes = state.scopes, sessionId, browser }: SignInFor,
): Promise<AuthorizationRequest> {
  checkScopes(scopes);
  const { verifier, challenge } = await createPkcePair({ random: state.random });
  const oauthState = createState(state.random);
  const expiresAt = state.now() + state.pendingLifetimeMs;
  const name = state.keys.pending + (await pendingKey(oauthState));
  const record = { state: oauthState, verifier, expiresAt, sessionId, browser };
  await store(
    state,
    () => putPending(state.pendingStorage, name, record, state.pendingLifetimeMs, state.log),
    verifier,
    oauthState,
  );
  const query = String(
    new URLSearchParams({
      response_type: "code",
      client_id: state.clientId,
      redirect_uri: state.redirectUri,
      scope: scopes.join(" "),
      state: oauthState,
      code_challenge: challenge,
      code_challenge_method: "S256",
    }),
  );
  // Spaces as %20, not the form encoding's "+", which some servers read literally.
  return { url: state.base + "/oauth/authorize?" + query.replace(/\+/g, "%20"), expiresAt };
}

/** Begins a sign-in of this manager's session (see {@link beginSignIn}). */
export const beginAuthorization = (
  state: ManagerState,
  { scopes = state.scopes }: AuthorizationOptions = {},
): Promise<AuthorizationRequest> => beginSignIn(state, { scopes, sessionId: state.sessionId });

/** A callback that passed every check: what its exchange needs, and the session of its sign-in. */
export interface CheckedCallback {
  readonly code: string;
  readonly verifier: string;
  readonly sessionId: string | undefined;
}

/** The refusal of a callback whose sign-in is bound to another browser (or to none, where one is brought). */
export const ANOTHER_BROWSER = "the sign-in was started in another browser";

/**
 * The binding rule of a callback that brings no binding (step 6): a pending sign-in bound to a
 * browser (`browser` in its record, a server's) is refused; an unbound one passes. A server's
 * callback checks a binding it brings with `checkBinding` (binding.ts), passed in by `createSessions`,
 * so that apps without sessions do not ship it.
 *
 * @throws a `TokenManagerError` `STATE_MISMATCH` ("the sign-in was started in another browser")
 * @see RFC 9700 §4.7.1; RFC 6749 §10.12
 */
export function refuseBound(browser: string | undefined): void {
  if (browser !== undefined) fail("STATE_MISMATCH", ANOTHER_BROWSER);
}

/** What a callback is checked against beside its pending sign-in. */
export interface CallbackChecks {
  /**
   * Checks the record's browser binding hash (`browser`, absent where it is unbound) against the
   * binding the callback's request brought; absent: {@link refuseBound}.
   */
  readonly binding?: ((browser: string | undefined) => void | Promise<void>) | undefined;
  /** Whether a sign-in begun for the record's session may complete here (step 7). */
  readonly accepts: (sessionId: string | undefined) => boolean;
}

/**
 * Finds the pending sign-in by the callback's state, takes it (single use) before any other check,
 * and checks the callback against it in the order every kit follows (spec/token-store/README.md,
 * "The callback"): at the redirect URI, repeating none of `state`, `code`, `error`; a record of that
 * state (compared in constant time); the browser binding; the session; before it expired; not an
 * error. Sends nothing.
 */
export async function takeCallback(state: ManagerState, url: URL, checks: CallbackChecks): Promise<CheckedCallback> {
  const params = url.searchParams;
  const states = params.getAll("state");
  if (states.length > 1) fail("INVALID_CALLBACK", "repeated state");
  const received = states[0] || fail("STATE_MISSING");
  const name = state.keys.pending + (await pendingKey(received));
  // Taken before any other check, so that it is used at most once whatever happens.
  const raw = await store(state, () => takePending(state.pendingStorage, name, state.log));
  // Mix-up defence: the answer must come back where this client asked for it.
  if (callbackTarget(url) !== state.redirectTo) fail("INVALID_CALLBACK", "not at redirectUri");
  // An ambiguous callback is refused rather than read last-one-wins.
  for (const k of ["code", "error"]) if (params.getAll(k).length > 1) fail("INVALID_CALLBACK", "repeated " + k);
  const pending = parsePending(raw);
  if (!pending) {
    if (raw !== undefined && raw !== null) state.log?.("pending-unreadable", { key: whereIs(state, name) });
    return fail("NO_PENDING_SIGN_IN");
  }
  if (!constantTimeEqual(received, pending.state)) fail("STATE_MISMATCH");
  await (checks.binding ?? refuseBound)(pending.browser);
  if (!checks.accepts(pending.sessionId)) fail("STATE_MISMATCH", "the sign-in was started for another session");
  if (state.now() > pending.expiresAt) fail("STATE_EXPIRED");
  const denied = parseOAuthError(Object.fromEntries(params));
  if (denied) fail("AUTHORIZATION_DENIED", describe(denied), undefined, denied);
  return {
    code: params.get("code") || fail("INVALID_CALLBACK", "no code"),
    verifier: pending.verifier,
    sessionId: pending.sessionId,
  };
}

/** Exchanges a checked callback's code at `POST /oauth/token`, and stores the tokens under this manager's scope. */
export async function exchange(state: ManagerState, { code, verifier }: CheckedCallback): Promise<SessionInfo> {
  state.generation++;
  const request = authorizationCodeGrantRequest(state.clientId, state.redirectUri, code, verifier);
  const session = await commit(state, await requestTokens(state, request, known(state, code, verifier)));
  state.log?.("signed-in", { expiresAt: session.expiresAt, scope: session.scope });
  announce(state, { event: "signed-in", session });
  return session;
}

/** Parses a callback URL: not a URL at all is the caller's slip, refused before anything is taken. */
export const callbackUrl = (value: string | URL): URL =>
  parseUrl(
    value,
    "not an absolute URL: pass the whole callback URL (location.href), not location.search",
    "INVALID_CALLBACK",
  );

/** Checks the callback of a sign-in of this manager's session, exchanges its code, and stores the tokens. */
export async function completeAuthorization(state: ManagerState, url: string | URL): Promise<SessionInfo> {
  const checked = await takeCallback(state, callbackUrl(url), {
    accepts: (sessionId) => sessionId === state.sessionId,
  });
  return exchange(state, checked);
}
