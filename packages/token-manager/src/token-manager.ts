/**
 * The token manager: PKCE sign-in, rotation-safe refresh, revocation and sign-out, on `fetch` and
 * WebCrypto only. `createTokenManager` builds one state object and binds to it the behaviours of
 * the modules beside this one, each a top-level `(state, …)` function named after what it does:
 *
 * | module | what it holds |
 * |---|---|
 * | `manager-state.ts` | the state, the option checks |
 * | `events.ts` | `on`, `off` and the events the modules emit |
 * | `sign-in.ts` | `beginAuthorization`, `completeAuthorization`, and the steps of a server's sign-in |
 * | `pending.ts`, `binding.ts` | pending sign-ins by state; the browser binding of a server's sign-in |
 * | `session-id.ts`, `sessions.ts` | the session id rule; `createSessions`, a server's many sessions |
 * | `refresh.ts` | `getAccessToken` and the refresh protocol (spec/token-store/README.md) |
 * | `refresh-intent.ts` | the refresh intents (`refreshIntents`), which a storage whose lock processes share hands over |
 * | `token-request.ts` | the requests to the OAuth endpoints and the processing of their answers |
 * | `token-record.ts` | the stored token record and its rules |
 * | `session.ts` | reading and writing the record, `getSession`, `isSignedIn`, `signOut` |
 * | `revoke.ts` | `revoke` |
 * | `tabs.ts` | what tabs sharing `localStorage` tell each other |
 *
 * @see RFC 6749 §4.1, §5.1, §5.2, §6, §10.12; RFC 7636; RFC 7009 §2.1; OAuth 2.0 Security BCP (RFC 9700)
 */
import { off, on } from "./events.js";
import { closeManager, createManagerState, type ManagerState } from "./manager-state.js";
import { getAccessToken } from "./refresh.js";
import { revoke } from "./revoke.js";
import { getSession, isSignedIn, onUnauthorized, signOut } from "./session.js";
import { beginAuthorization, completeAuthorization } from "./sign-in.js";
import { listenToTabs } from "./tabs.js";
import type { TokenManager, TokenManagerOptions } from "./types.js";

/**
 * Creates a token manager for one tenant and one OAuth client.
 *
 * @throws {@link TokenManagerError} with code `INVALID_OPTIONS` when `baseUrl` is not the tenant's
 * origin over https (or http to loopback), its message saying why, or another option is invalid.
 * @example
 * ```ts
 * const tm = createTokenManager({
 *   baseUrl: "https://acme.tenant.test",
 *   clientId: "demo-integration",
 *   redirectUri: "https://app.example.org/callback",
 *   scopes: ["profile:read"],
 *   storage: webStorage(localStorage),
 *   pendingStorage: webStorage(sessionStorage),
 * });
 * location.assign((await tm.beginAuthorization()).url);
 * // on the callback page:
 * await tm.completeAuthorization(location.href);
 * const token = await tm.getAccessToken();
 * ```
 * @see RFC 6749 §4.1, §6; RFC 7636; RFC 7009; RFC 9700
 */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const state = createManagerState(options);
  listenToTabs(state);
  return managerOf(state);
}

/** The manager's methods, bound to its state. */
export function managerOf(state: ManagerState): TokenManager {
  return {
    beginAuthorization: beginAuthorization.bind(null, state),
    completeAuthorization: completeAuthorization.bind(null, state),
    getAccessToken: getAccessToken.bind(null, state),
    onUnauthorized: onUnauthorized.bind(null, state),
    revoke: revoke.bind(null, state),
    signOut: () => signOut(state),
    isSignedIn: isSignedIn.bind(null, state),
    getSession: getSession.bind(null, state),
    on: (event, listener) => on(state, event, listener),
    off: (event, listener) => off(state, event, listener),
    close: () => closeManager(state),
  };
}
