import { homedir } from "node:os";
import { createTokenManager } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";

// The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
const tm = createTokenManager({
  baseUrl: "http://127.0.0.1:4020",
  clientId: "demo-cli",
  redirectUri: "http://127.0.0.1:53682/callback",
  scopes: ["profile:read"],
  storage: fileStorage(`${homedir()}/.config/my-cli/tokens.json`),
});

// Sign out at the tenant: the stored access token is revoked
// (its request shape is assumed, RFC 7009 §2.1), which disconnects
// the integration, then both tokens are cleared. On failure they
// are kept: retry, or tm.signOut() to forget them here only.
if (await tm.isSignedIn()) {
  await tm.revoke();
  console.log("Signed out: the access token is revoked.");
} else {
  console.log("Not signed in: there is nothing to revoke.");
}
