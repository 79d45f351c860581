import {
  createTenantClient,
  ForbiddenError,
} from "@tenant-integration/client";
import { createTokenManager } from "@tenant-integration/token-manager";

const baseUrl = "https://acme.tenant.example";
const tm = createTokenManager({
  baseUrl,
  clientId: "demo-integration",
  redirectUri: "http://127.0.0.1:53682/callback",
  scopes: ["profile:read"],
});
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
