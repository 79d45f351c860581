// The typical app on the kit (../kit.js) plus a token manager that logs the session to the console,
// an opt-in import. Bundled by ../../feature-sizes.mjs, never run.
import { createTokenManager, logSessionTo, memoryStorage } from "@tenant-integration/token-manager";
import { baseUrl, clientId, redirectUri } from "../tenant.js";

export * from "../kit.js";
export const loggingManager = createTokenManager({
  baseUrl,
  clientId,
  redirectUri,
  scopes: ["profile:read"],
  storage: memoryStorage(),
  logger: logSessionTo(console),
});
