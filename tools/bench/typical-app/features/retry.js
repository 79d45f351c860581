// The typical app on the kit (../kit.js) plus a client with retries of 429/5xx answers and failed
// connections, an opt-in import. Bundled by ../../feature-sizes.mjs, never run.
import { createTenantClient, retryPolicy } from "@tenant-integration/client";
import { tokenManager } from "../kit.js";
import { baseUrl } from "../tenant.js";

export * from "../kit.js";
export const retryingClient = createTenantClient({ baseUrl, auth: tokenManager, retry: retryPolicy() });
