import { homedir } from "node:os";
import { createTenantClient, ForbiddenError } from "@tenant-integration/client";
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

// Sign in first: without tokens the call fails with NOT_SIGNED_IN.
// (In a browser app, completeAuthorization on the callback page.)
if (!(await tm.isSignedIn())) {
  const callback = await waitForCallback(redirectUri);
  const { url } = await tm.beginAuthorization();
  await callback.checkRedirect(url);
  console.log(`Open this URL to sign in:\n${url}`);
  await tm.completeAuthorization(await callback.callback);
}

// Bearer token and Accept: application/json, to the tenant only.
// The token is refreshed before it expires; a 401 (an expired or
// revoked token, assumed: RFC 6750 §3.1) makes the client refresh
// once and send the call again.
const client = createTenantClient({ baseUrl, auth: tm });

const { data, error } = await client.GET("/api/v1/auth/user");
if (error instanceof ForbiddenError) {
  // The token lacks the route's scope (description §5.9); the
  // scope the challenge names (assumed: RFC 6750 §3.1).
  console.log("needs the scope", error.requiredScope);
} else if (error) {
  throw error;
} else {
  console.log(data); // its fields are not shown: an open object
}
