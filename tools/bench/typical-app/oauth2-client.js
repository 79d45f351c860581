// The same app on @badgateway/oauth2-client + openapi-fetch: OAuth2Client builds the authorize URL
// with PKCE, exchanges the code and revokes; its OAuth2Fetch, as openapi-fetch's fetch, sends the
// bearer header, refreshes near expiry (one refresh at a time within the page) and retries a 401
// once. The tenant publishes no discovery document, so its endpoints are given; its token requests
// go through sendFormsAsJson (the library's `fetch` option), since the tenant takes JSON. It does
// less than the kit: no cross-tab refresh, no redaction. Bundled by sizes.mjs; run against the
// sandbox by peer-check.mjs before its bytes count.
import { generateCodeVerifier, OAuth2Client, OAuth2Fetch } from "@badgateway/oauth2-client";
import createClient from "openapi-fetch";
import { sendFormsAsJson } from "./json-bodies.js";
import { baseUrl, clientId, redirectUri } from "./tenant.js";

const oauth2 = new OAuth2Client({
  server: baseUrl,
  clientId,
  fetch: sendFormsAsJson,
  authorizationEndpoint: "/oauth/authorize",
  tokenEndpoint: "/oauth/token",
  revocationEndpoint: "/oauth/revoke",
});

const storedToken = () => JSON.parse(localStorage.getItem("tokens") ?? "null");

export async function signIn() {
  const codeVerifier = await generateCodeVerifier();
  const state = crypto.randomUUID();
  sessionStorage.setItem("pending", JSON.stringify({ codeVerifier, state }));
  location.assign(
    await oauth2.authorizationCode.getAuthorizeUri({ redirectUri, state, codeVerifier, scope: ["profile:read"] }),
  );
}

export async function onCallback() {
  const { codeVerifier, state } = JSON.parse(sessionStorage.getItem("pending") ?? "{}");
  sessionStorage.removeItem("pending");
  const token = await oauth2.authorizationCode.getTokenFromCodeRedirect(location.href, {
    redirectUri,
    state,
    codeVerifier,
  });
  localStorage.setItem("tokens", JSON.stringify(token));
}

const tokens = new OAuth2Fetch({
  client: oauth2,
  // Called when it holds no token: the one onCallback stored, or null (not signed in).
  getNewToken: storedToken,
  getStoredToken: storedToken,
  storeToken: (token) => localStorage.setItem("tokens", JSON.stringify(token)),
});
const client = createClient({ baseUrl, fetch: (request) => tokens.fetch(request) });

export async function currentUser() {
  const { data, error } = await client.GET("/api/v1/auth/user");
  if (error) throw new Error("GET /api/v1/auth/user failed");
  return data;
}

export async function signOut() {
  const token = storedToken();
  if (token) await oauth2.revoke(token, "access_token");
  localStorage.removeItem("tokens");
}
