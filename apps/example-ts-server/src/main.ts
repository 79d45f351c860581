/**
 * A tiny web app whose users each connect their own tenant account: a server acting for many users
 * with the TypeScript kit (`createSessions`, `signInHandlers`, `sessionClient`), served by Node's
 * http through `@hono/node-server`.
 *
 *     PORT          the port to listen on, on 127.0.0.1 (default 8091)
 *     TENANT_URL    the tenant (default http://127.0.0.1:4020, the sandbox `pnpm start` serves)
 *     CLIENT_ID     the OAuth client (default demo-server)
 *     REDIRECT_URI  the redirect URI registered for it (default http://127.0.0.1:<PORT>/callback)
 *     TOKEN_FILE    keep the sessions in this token file (several processes may share it)
 *
 * Without TOKEN_FILE the sessions live in memory. For several machines, give `createSessions` the
 * Redis store of `@tenant-integration/token-store-redis` (`redisStorage(client)`) instead.
 */
import { serve } from "@hono/node-server";
import { createSessions, memoryStorage, type TokenStorage } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";
import { createApp } from "./app.js";

const env = (name: string, fallback: string): string => process.env[name] || fallback;

/** Where the sessions live: a token file, or memory. */
function storage(): TokenStorage {
  const file = process.env["TOKEN_FILE"];
  return file ? fileStorage(file) : memoryStorage();
}

const port = Number(env("PORT", "8091"));
// One sessions object for the whole server, one session per user of the app.
const sessions = createSessions({
  baseUrl: env("TENANT_URL", "http://127.0.0.1:4020"),
  clientId: env("CLIENT_ID", "demo-server"),
  redirectUri: env("REDIRECT_URI", `http://127.0.0.1:${port}/callback`),
  scopes: ["profile:read"],
  storage: storage(),
});
const server = serve({ fetch: createApp(sessions).fetch, port, hostname: "127.0.0.1" }, (address) => {
  console.log(`example-ts-server listening on http://127.0.0.1:${address.port}`);
});

/** Stops taking requests and exits once those under way are answered (at most 5 s). */
function stop(): void {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 5_000).unref();
}
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
