import { createTenantClient, ForbiddenError } from "@tenant-integration/client";
import { createTokenManager } from "@tenant-integration/token-manager";
import { waitForCallback } from "@tenant-integration/token-manager/node";

const baseUrl = "https://acme.tenant.test";
const redirectUri = "http://127.0.0.1:53682/callback";
const tm = createTokenManager({
  baseUrl,
  clientId: "demo-integration",
  redirectUri,
  scopes: ["profile:read"],
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

// The bearer token goes only to the tenant; a 401 is refreshed
// once and the call repeated.
const client = createTenantClient({ baseUrl, auth: tm });

const { data, error } = await client.GET("/api/v1/auth/user");
if (error instanceof ForbiddenError) {
  console.log("needs the scope", error.requiredScope);
} else if (error) {
  throw error;
} else {
  console.log(data);
}
