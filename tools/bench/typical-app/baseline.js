// The same app on openapi-fetch + oauth4webapi, the smallest well-known pair that covers it: PKCE,
// the authorize URL, the code exchange, refresh (one at a time in the page: a second presenter of a
// rotated refresh token would end the session), revocation, and the bearer header on the API call.
// Its token requests go through sendFormsAsJson (oauth4webapi's customFetch hook), since the tenant
// takes JSON. It does less than the kit: no cross-tab refresh, no retry, no redaction. Bundled by
// sizes.mjs; run against the sandbox by peer-check.mjs before its bytes count.
import * as oauth from "oauth4webapi";
import createClient from "openapi-fetch";
import { sendFormsAsJson } from "./json-bodies.js";
import { baseUrl, clientId, redirectUri } from "./tenant.js";

const server = {
  issuer: baseUrl,
  authorization_endpoint: `${baseUrl}/oauth/authorize`,
  token_endpoint: `${baseUrl}/oauth/token`,
  revocation_endpoint: `${baseUrl}/oauth/revoke`,
};
const oauthClient = { client_id: clientId };
const clientAuth = oauth.None();
// http only to a sandbox on this machine, as the kit allows
const options = {
  [oauth.allowInsecureRequests]: new URL(baseUrl).hostname === "127.0.0.1",
  [oauth.customFetch]: sendFormsAsJson,
};

function save(result) {
  const expiresAt = Date.now() + (result.expires_in ?? 0) * 1000;
  localStorage.setItem("tokens", JSON.stringify({ ...result, expiresAt }));
}

export async function signIn() {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem("pending", JSON.stringify({ verifier, state }));
  const url = new URL(server.authorization_endpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", oauthClient.client_id);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("scope", "profile:read");
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  location.assign(url.href);
}

export async function onCallback() {
  const { verifier, state } = JSON.parse(sessionStorage.getItem("pending") ?? "{}");
  sessionStorage.removeItem("pending");
  const params = oauth.validateAuthResponse(server, oauthClient, new URL(location.href), state);
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    oauthClient,
    clientAuth,
    params,
    redirectUri,
    verifier,
    options,
  );
  save(await oauth.processAuthorizationCodeResponse(server, oauthClient, response));
}

async function refresh(tokens) {
  const response = await oauth.refreshTokenGrantRequest(server, oauthClient, clientAuth, tokens.refresh_token, options);
  const result = await oauth.processRefreshTokenResponse(server, oauthClient, response);
  save({ ...result, refresh_token: result.refresh_token ?? tokens.refresh_token });
  return result.access_token;
}

let refreshing;
async function accessToken() {
  const tokens = JSON.parse(localStorage.getItem("tokens") ?? "null");
  if (!tokens) throw new Error("not signed in");
  if (Date.now() < tokens.expiresAt - 60_000) return tokens.access_token;
  refreshing ??= refresh(tokens).finally(() => (refreshing = undefined));
  return refreshing;
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
  const tokens = JSON.parse(localStorage.getItem("tokens") ?? "null");
  if (tokens) {
    const response = await oauth.revocationRequest(server, oauthClient, clientAuth, tokens.access_token, options);
    await oauth.processRevocationResponse(response);
  }
  localStorage.removeItem("tokens");
}
