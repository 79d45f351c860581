import { homedir } from "node:os";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage, waitForCallback } from "@tenant-integration/token-manager/node";

// The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
const baseUrl = "http://127.0.0.1:4020";
// Registered for the client exactly, port included:
const redirectUri = "http://127.0.0.1:53682/callback";
const tm = createTokenManager({
  baseUrl,
  clientId: "demo-cli",
  redirectUri,
  scopes: ["profile:read"],
  // 0600; shared with the other samples and kits:
  storage: fileStorage(`${homedir()}/.config/my-cli/tokens.json`),
});

// A one-shot server on the redirect URI's port, then the authorize
// URL: a fresh state and a PKCE S256 challenge (RFC 7636), kept as
// the pending sign-in. Open it in a browser and approve.
const callback = await waitForCallback(redirectUri);
const { url } = await tm.beginAuthorization();
await callback.checkRedirect(url); // REDIRECT_URI_REFUSED if unknown
console.log(`Open this URL to sign in:\n${url}`);

// The browser comes back with code and state: the state is
// compared exactly, then the code is exchanged and the tokens
// stored (exchangeToken).
const session = await tm.completeAuthorization(await callback.callback);
const until = new Date(session.expiresAt).toISOString();
console.log(`Signed in; the access token is valid until ${until}`);
