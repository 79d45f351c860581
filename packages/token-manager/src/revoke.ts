/**
 * Revocation: the current access token revoked at the tenant, then the tokens cleared. The Python
 * kit's `revoke` of `_async/token_manager.py` (its request built in `_token_request.py`), the Go
 * kit's `revoke.go`.
 *
 * @see RFC 7009 §2.1, §2.2
 */
import type { TokenManagerError } from "./errors.js";
import { emit } from "./events.js";
import { known, type ManagerState } from "./manager-state.js";
import { getAccessToken } from "./refresh.js";
import { clear, signOut } from "./session.js";
import { announce } from "./tabs.js";
import { revocationRequest, send } from "./token-request.js";

/**
 * Revokes the current access token at `POST /oauth/revoke`, then clears the tokens and fires
 * `revoked` and `signed-out`. Without a session there is nothing to revoke: it only clears. On
 * failure the tokens are kept.
 */
export async function revoke(state: ManagerState): Promise<void> {
  let token: string;
  try {
    token = await getAccessToken(state);
  } catch (e) {
    const code = (e as TokenManagerError | undefined)?.code;
    if (code === "NOT_SIGNED_IN" || code === "SESSION_ENDED") return signOut(state);
    throw e;
  }
  await send(state, revocationRequest(state.clientId, token), known(state, token));
  await clear(state);
  state.log?.("revoked", {});
  emit(state, "revoked");
  announce(state, { event: "signed-out", revoked: true });
}
