// A typical browser app on the kit: sign in (PKCE), call GET /api/v1/auth/user (refreshing when
// needed, rotation-safe across tabs), sign out with revocation. Bundled by sizes.mjs; run
// against the sandbox by peer-check.mjs before its bytes count.
import { createTenantClient } from "@tenant-integration/client";
import { createTokenManager, webStorage } from "@tenant-integration/token-manager";
import { baseUrl, clientId, redirectUri } from "./tenant.js";

export const tokenManager = createTokenManager({
  baseUrl,
  clientId,
  redirectUri,
  scopes: ["profile:read"],
  storage: webStorage(localStorage),
  pendingStorage: webStorage(sessionStorage),
});
const client = createTenantClient({ baseUrl, auth: tokenManager });

export async function signIn() {
  location.assign((await tokenManager.beginAuthorization()).url);
}

export async function onCallback() {
  await tokenManager.completeAuthorization(location.href);
}

export async function currentUser() {
  const { data, error } = await client.GET("/api/v1/auth/user");
  if (error) throw new Error("GET /api/v1/auth/user failed");
  return data;
}

export async function signOut() {
  await tokenManager.revoke();
}
