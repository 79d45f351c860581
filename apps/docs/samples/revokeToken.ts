import { createTokenManager } from "@tenant-integration/token-manager";

const tm = createTokenManager({
  baseUrl: "https://acme.tenant.test",
  clientId: "demo-integration",
  redirectUri: "http://127.0.0.1:53682/callback",
  scopes: ["profile:read"],
});

// Sign out at the tenant (RFC 7009): the token is revoked, then
// the stored tokens are cleared. On failure the tokens are kept:
// retry, or tm.signOut() to forget them locally only.
await tm.revoke();
