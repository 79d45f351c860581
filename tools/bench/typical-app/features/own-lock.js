// The typical app on the kit (../kit.js) plus a lock of one's own (processes sharing a storage
// through something the kit does not know) with the refresh intents beside it, which such a lock
// needs: an opt-in import, as fileStorage, redisStorage and postgresStorage bring them. Bundled by
// ../../feature-sizes.mjs, never run.
import { createTokenManager, memoryStorage, refreshIntents } from "@tenant-integration/token-manager";
import { baseUrl, clientId, redirectUri } from "../tenant.js";

export * from "../kit.js";
export const shared = createTokenManager({
  baseUrl,
  clientId,
  redirectUri,
  scopes: ["profile:read"],
  storage: memoryStorage(),
  lock: (_name, task) => task(),
  refreshIntents,
});
