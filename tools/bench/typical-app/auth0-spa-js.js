// The same app on auth0-spa-js + openapi-fetch: Auth0Client signs in with PKCE, exchanges the code,
// refreshes with rotating refresh tokens (useRefreshTokens) and signs out; openapi-fetch sends the
// bearer header. auth0-spa-js speaks to an Auth0 tenant (it derives the endpoints from `domain`),
// so it could not serve this tenant as it is: it is here as the size of a full SPA SDK. Bundled by
// sizes.mjs, never run.
import { Auth0Client } from "@auth0/auth0-spa-js";
import createClient from "openapi-fetch";

const baseUrl = "https://acme.tenant.test";
const auth = new Auth0Client({
  domain: "acme.tenant.test",
  clientId: "demo-integration",
  authorizationParams: { redirect_uri: "https://app.example.org/callback", scope: "profile:read" },
  useRefreshTokens: true,
  cacheLocation: "localstorage",
});

export function signIn() {
  return auth.loginWithRedirect();
}

export function onCallback() {
  return auth.handleRedirectCallback();
}

const client = createClient({ baseUrl });
client.use({
  async onRequest({ request }) {
    request.headers.set("Authorization", `Bearer ${await auth.getTokenSilently()}`);
    return request;
  },
});

export async function currentUser() {
  const { data, error } = await client.GET("/api/v1/auth/user");
  if (error) throw new Error("GET /api/v1/auth/user failed");
  return data;
}

export function signOut() {
  return auth.logout({ openUrl: false });
}
