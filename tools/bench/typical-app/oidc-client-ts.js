// The same app on oidc-client-ts + openapi-fetch: its UserManager does the sign-in with PKCE, the
// code exchange, refresh (signinSilent with the refresh token: one at a time in the page, since it
// does not share a refresh between concurrent callers and a second presenter of a rotated refresh
// token would end the session) and revocation; openapi-fetch sends the bearer header. The tenant
// publishes no discovery document, so its endpoints are given as metadata. oidc-client-ts sends its
// token requests as forms through the page's fetch and has no fetch option, so the app wraps the
// page's fetch for the tenant's /oauth/ endpoints (json-bodies.js), since the tenant takes JSON. It
// does less than the kit: no cross-tab refresh, no retry, no redaction. Bundled by sizes.mjs; run
// against the sandbox by peer-check.mjs before its bytes count.
import { UserManager, WebStorageStateStore } from "oidc-client-ts";
import createClient from "openapi-fetch";
import { sendTenantFormsAsJson } from "./json-bodies.js";
import { baseUrl, clientId, redirectUri } from "./tenant.js";

sendTenantFormsAsJson(`${baseUrl}/oauth/`);

const users = new UserManager({
  authority: baseUrl,
  client_id: clientId,
  redirect_uri: redirectUri,
  response_type: "code",
  scope: "profile:read",
  metadata: {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
  },
  userStore: new WebStorageStateStore({ store: localStorage }),
  automaticSilentRenew: false,
  loadUserInfo: false,
});

export function signIn() {
  return users.signinRedirect();
}

export async function onCallback() {
  await users.signinRedirectCallback();
}

let refreshing;
async function accessToken() {
  const user = await users.getUser();
  if (!user) throw new Error("not signed in");
  if ((user.expires_in ?? 0) >= 60) return user.access_token;
  refreshing ??= users.signinSilent().finally(() => (refreshing = undefined));
  const renewed = await refreshing;
  if (!renewed) throw new Error("not signed in");
  return renewed.access_token;
}

const client = createClient({ baseUrl });
client.use({
  async onRequest({ request }) {
    request.headers.set("Authorization", `Bearer ${await accessToken()}`);
    return request;
  },
});

export async function currentUser() {
  const { data, error } = await client.GET("/api/v1/auth/user");
  if (error) throw new Error("GET /api/v1/auth/user failed");
  return data;
}

export async function signOut() {
  await users.revokeTokens();
  await users.removeUser();
}
