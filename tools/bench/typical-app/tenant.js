// Where every typical app connects: one tenant and one registered client, in one file so the apps
// differ only in their libraries. sizes.mjs bundles it as it is; peer-check.mjs swaps in the address
// of a sandbox it starts, where the same client is registered.
export const baseUrl = "https://acme.tenant.test";
export const clientId = "demo-integration";
export const redirectUri = "https://app.example.org/callback";
