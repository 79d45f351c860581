import { createTokenManager } from "@tenant-integration/token-manager";

const tm = createTokenManager({
  baseUrl: "https://acme.tenant.test",
  clientId: "demo-integration",
  // exactly as registered:
  redirectUri: "http://127.0.0.1:53682/callback",
  scopes: ["profile:read"],
});

// The authorize URL with a fresh state and a PKCE S256 challenge
// (RFC 7636); the verifier and the state are kept as the pending
// sign-in. Send the person's browser there.
const { url } = await tm.beginAuthorization();
console.log(`Open this URL to sign in:\n${url}`);
