/**
 * Sign-in: the authorization request with PKCE and a state, kept as the one pending sign-in, and the
 * callback, checked and exchanged for tokens. The same module as the Python kit's `_sign_in.py`.
 *
 * @see RFC 6749 §3.1.2, §4.1.1–§4.1.3, §10.12; RFC 7636 §4.3, §4.5; RFC 9700 §4.4 (mix-up)
 */
import { isString } from "./encoding.js";
import { describe, fail } from "./errors.js";
import { checkScopes, known, type ManagerState, store } from "./manager-state.js";
import { callbackTarget, parseUrl } from "./options.js";
import { createPkcePair } from "./pkce.js";
import { commit } from "./session.js";
import { constantTimeEqual, createState } from "./state.js";
import { announce } from "./tabs.js";
import { authorizationCodeGrantRequest, requestTokens } from "./token-request.js";
import { parseJson, parseOAuthError } from "./token-response.js";
import type { AuthorizationOptions, AuthorizationRequest, SessionInfo } from "./types.js";

/**
 * Creates a PKCE pair and a state, stores them as the one pending sign-in (replacing any earlier
 * one), and returns the authorize URL with its seven parameters.
 */
export async function beginAuthorization(
  state: ManagerState,
  { scopes = state.scopes }: AuthorizationOptions = {},
): Promise<AuthorizationRequest> {
  checkScopes(scopes);
  const { verifier, challenge } = await createPkcePair({ random: state.random });
  const oauthState = createState(state.random);
  const expiresAt = state.now() + state.pendingLifetimeMs;
  const pending = JSON.stringify({ state: oauthState, verifier, expiresAt });
  await store(state, () => state.pendingStorage.set(state.keys.pending, pending), verifier);
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

/**
 * Takes the pending sign-in (single use) and checks the callback against it: at the redirect URI,
 * repeating none of `state`, `code`, `error`, with the pending sign-in's state (compared in constant
 * time) before it expired, and not an error. Sends nothing.
 *
 * @returns the authorization code and the PKCE verifier
 */
async function checkedCallback(state: ManagerState, url: URL): Promise<{ code: string; verifier: string }> {
  // Take the pending sign-in before any other check, so that it is used at most once whatever happens.
  const raw = await store(state, () => state.pendingStorage.get(state.keys.pending));
  if (raw) await store(state, () => state.pendingStorage.delete(state.keys.pending));
  const params = url.searchParams;
  // Mix-up defence: the answer must come back where this client asked for it.
  if (callbackTarget(url) !== state.redirectTo) fail("INVALID_CALLBACK", "not at redirectUri");
  // An ambiguous callback is refused rather than read last-one-wins.
  for (const k of ["state", "code", "error"])
    if (params.getAll(k).length > 1) fail("INVALID_CALLBACK", "repeated " + k);
  // An absent or unreadable record is no pending sign-in.
  const pending = parseJson(raw) as Record<string, unknown>;
  const { verifier, expiresAt } = pending;
  if (!isString(pending["state"]) || !isString(verifier) || typeof expiresAt !== "number")
    return fail("NO_PENDING_SIGN_IN");
  const received = params.get("state") ?? fail("STATE_MISSING");
  if (!constantTimeEqual(received, pending["state"])) fail("STATE_MISMATCH");
  if (state.now() > expiresAt) fail("STATE_EXPIRED");
  const denied = parseOAuthError(Object.fromEntries(params));
  if (denied) fail("AUTHORIZATION_DENIED", describe(denied), undefined, denied);
  return { code: params.get("code") || fail("INVALID_CALLBACK", "no code"), verifier };
}

/** Checks the callback, exchanges its code at `POST /oauth/token`, and stores the tokens. */
export async function completeAuthorization(state: ManagerState, callbackUrl: string | URL): Promise<SessionInfo> {
  // Not a URL at all (location.search for location.href) is the caller's slip, not a callback:
  // refused before the pending sign-in is taken, so that the whole URL can follow.
  const url = parseUrl(
    callbackUrl,
    "not an absolute URL: pass the whole callback URL (location.href), not location.search",
    "INVALID_CALLBACK",
  );
  const { code, verifier } = await checkedCallback(state, url);
  state.generation++;
  const exchange = authorizationCodeGrantRequest(state.clientId, state.redirectUri, code, verifier);
  const session = await commit(state, await requestTokens(state, exchange, known(state, code, verifier)));
  state.log?.("signed-in", { expiresAt: session.expiresAt, scope: session.scope });
  announce(state, { event: "signed-in", session });
  return session;
}
