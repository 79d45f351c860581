import { createTokenManager } from "@tenant-integration/token-manager";

const tm = createTokenManager({
  baseUrl: "https://acme.tenant.test",
  clientId: "demo-integration",
  redirectUri: "http://127.0.0.1:53682/callback",
  scopes: ["profile:read"],
});

// grant_type=authorization_code: the browser came back to the
// redirect URI. The state is checked first, then the code is
// exchanged with the PKCE verifier and the tokens are stored.
export async function onCallback(callbackUrl: string) {
  const session = await tm.completeAuthorization(callbackUrl);
  const until = new Date(session.expiresAt).toISOString();
  console.log(`signed in until ${until} with ${session.scope}`);
}

// grant_type=refresh_token: a valid access token, refreshed first
// when it is about to expire. The rotated refresh token is stored
// before the new access token is used; one refresh at a time.
export const accessToken = () => tm.getAccessToken();
