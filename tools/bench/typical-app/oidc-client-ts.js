// The same app on oidc-client-ts + openapi-fetch: oidc-client-ts's UserManager does the sign-in
// with PKCE, the code exchange, refresh (signinSilent with the refresh token) and revocation; the
// tenant publishes no discovery document, so its endpoints are given as metadata. openapi-fetch
// sends the bearer header. Bundled by sizes.mjs, never run.
import { UserManager, WebStorageStateStore } from "oidc-client-ts";
import createClient from "openapi-fetch";

const baseUrl = "https://acme.tenant.test";
const users = new UserManager({
  authority: baseUrl,
  client_id: "demo-integration",
  redirect_uri: "https://app.example.org/callback",
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

export function onCallback() {
  return users.signinRedirectCallback();
}

async function accessToken() {
  let user = await users.getUser();
  if (!user) throw new Error("not signed in");
  if (user.expired || (user.expires_in ?? 0) < 60) user = await users.signinSilent();
  if (!user) throw new Error("not signed in");
  return user.access_token;
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
  await users.revokeTokens(["access_token", "refresh_token"]);
  await users.removeUser();
}
