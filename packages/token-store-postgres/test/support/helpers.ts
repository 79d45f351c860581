/**
 * Shared pieces of the PostgreSQL suites: pools on the run's server, a table of the test's own, and
 * token managers signed in against an in-process sandbox.
 */
import pg from "pg";
import { createSandbox } from "@tenant-integration/sandbox";
import { signedInKit } from "@tenant-integration/test-support/signed-in";
import { createTokenManager } from "@tenant-integration/token-manager";
import { inject, onTestFinished } from "vitest";
import { ensureSchema } from "../../src/index.js";

/** The tenant and client of the in-process sandbox, and its redirect URI. */
export { REDIRECT, TENANT } from "@tenant-integration/test-support/signed-in";

/** A pool on `url` (default the run's server), ended when the test ends. Its idle connections' errors are heard. */
export function openPool(config: pg.PoolConfig = {}, url = inject("postgresUrl")): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, ...config });
  // An idle connection the server ended is an `error` event of the pool: unheard, it ends the process.
  pool.on("error", () => {});
  onTestFinished(() => pool.end().catch(() => {}));
  return pool;
}

/** A table name no other test uses, in the default schema. */
export const uniqueTable = (): string => `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;

/** A new table of the kit's, made with `ensureSchema` on `pool`. */
export async function newTable(pool: pg.Pool): Promise<string> {
  const table = uniqueTable();
  await ensureSchema(pool, { table });
  return table;
}

/** An in-process sandbox, and token managers signed in against it (`signIn`). */
export const { inProcessSandbox, managerFor, signIn } = signedInKit({ createSandbox, createTokenManager });

/** Past the access token's 15 minutes. */
export const EXPIRED_MS = 16 * 60_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
