// A server process of the user's kind, for the multi-process tests of postgresStorage: it imports the
// BUILT package (by its own name) and node-postgres, opens a pool of its own, and keeps its tokens
// with `postgresStorage(pool, { baseUrl, clientId, table })`. It serves the commands of
// @tenant-integration/test-support's worker (sign-in, call, with holds and pauses: see its
// worker.mjs).
//
//   argv: <tenant url> <postgres url> <table> <client id> <redirect uri> [postgresStorage options as JSON]
import pg from "pg";
import { createTokenManager } from "@tenant-integration/token-manager";
import { postgresStorage } from "@tenant-integration/token-store-postgres";
import { runWorker } from "@tenant-integration/test-support/worker";

const [url, postgresUrl, table, clientId, redirectUri, storageOptions] = process.argv.slice(2);
const options = storageOptions ? JSON.parse(storageOptions) : {};
const pool = new pg.Pool({ connectionString: postgresUrl, max: 3 });
// An idle connection the server ended (a restart) is an `error` event of the pool.
pool.on("error", () => {});

runWorker({
  createTokenManager,
  url,
  clientId,
  redirectUri,
  storage: () => postgresStorage(pool, { ...options, baseUrl: url, clientId, table }),
});
