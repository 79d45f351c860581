// The typical app on the kit (../kit.js) plus a client that logs to the console, an opt-in import.
// Bundled by ../../feature-sizes.mjs, never run.
import { createTenantClient, logTo } from "@tenant-integration/client";
import { tokenManager } from "../kit.js";
import { baseUrl } from "../tenant.js";

export * from "../kit.js";
export const loggingClient = createTenantClient({ baseUrl, auth: tokenManager, logger: logTo(console) });
