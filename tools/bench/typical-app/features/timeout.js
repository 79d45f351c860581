// The typical app on the kit (../kit.js) plus a client with a timeout, an opt-in import. Bundled by
// ../../feature-sizes.mjs, never run.
import { createTenantClient, timeoutAfter } from "@tenant-integration/client";
import { tokenManager } from "../kit.js";
import { baseUrl } from "../tenant.js";

export * from "../kit.js";
export const limitedClient = createTenantClient({ baseUrl, auth: tokenManager, timeout: timeoutAfter(30_000) });
