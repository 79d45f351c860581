import { homedir } from "node:os";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage, waitForCallback } from "@tenant-integration/token-manager/node";

// The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
const baseUrl = "http://127.0.0.1:4020";
const redirectUri = "http://127.0.0.1:53682/callback";
const tm = createTokenManager({
  baseUrl,
  clientId: "demo-cli",
  redirectUri,
  scopes: ["profile:read"],
  storage: fileStorage(`${homedir()}/.config/my-cli/tokens.json`),
});

// grant_type=authorization_code: completing a sign-in exchanges
// the callback's code with the PKCE verifier (no secret).
if (!(await tm.isSignedIn())) {
  const callback = await waitForCallback(redirectUri);
  const { url } = await tm.beginAuthorization();
  await callback.checkRedirect(url);
  console.log(`Open this URL to sign in:\n${url}`);
  await tm.completeAuthorization(await callback.callback);
}

// grant_type=refresh_token: getAccessToken() refreshes first when
// the access token is within a minute of its 15 minutes. A rotated
// refresh token is stored before the new access token is used, one
// refresh at a time among the processes sharing the file.
await tm.getAccessToken();
const session = await tm.getSession();
const until = new Date(session!.expiresAt).toISOString();
console.log(`The access token is valid until ${until}`);
