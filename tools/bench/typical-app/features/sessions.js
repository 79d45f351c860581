// The typical app on the kit (../kit.js) plus a server's sessions: createSessions (the session id
// rule, sign-ins bound to a browser, the cache of managers), an opt-in import. Bundled by
// ../../feature-sizes.mjs, never run.
import { createSessions, memoryStorage } from "@tenant-integration/token-manager";
import { baseUrl, clientId, redirectUri } from "../tenant.js";

export * from "../kit.js";
export const sessions = createSessions({
  baseUrl,
  clientId,
  redirectUri,
  scopes: ["profile:read"],
  storage: memoryStorage(),
});
