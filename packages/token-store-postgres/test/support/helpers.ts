/**
 * Shared pieces of the PostgreSQL suites: pools on the run's server, a table of the test's own, and
 * token managers signed in against an in-process sandbox.
 */
import pg from "pg";
import { createSandbox } from "@tenant-integration/sandbox";
import { createTokenManager, type TokenManagerOptions, type TokenStorage } from "@tenant-integration/token-manager";
import { inject, onTestFinished } from "vitest";
import { ensureSchema } from "../../src/index.js";

/** The tenant and client of the in-process sandbox: the token manager's, and so the storage's. */
export const TENANT = { baseUrl: "http://127.0.0.1:4020", clientId: "fleet-demo" } as const;
export const REDIRECT = "http://127.0.0.1:53682/callback";

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

/** An in-process sandbox (auto-approve) and a fetch that sends to it. */
export function inProcessSandbox() {
  const sandbox = createSandbox({ clients: [{ id: TENANT.clientId, redirectUris: [REDIRECT] }], autoApprove: true });
  const fetch = async (input: string | URL | Request, init?: RequestInit) => sandbox.fetch(new Request(input, init));
  return { sandbox, fetch };
}

/** A token manager for the in-process sandbox, on `storage`, with a clock the test can move. */
export function managerFor(
  storage: TokenStorage,
  sandbox: ReturnType<typeof inProcessSandbox>,
  clock = { offsetMs: 0 },
  more: Partial<TokenManagerOptions> = {},
) {
  return createTokenManager({
    ...more,
    ...TENANT,
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage,
    fetch: sandbox.fetch,
    now: () => Date.now() + clock.offsetMs,
  });
}

/** Signs `tm` in: the sandbox approves at once, so its 302 carries the code. */
export async function signIn(
  tm: ReturnType<typeof managerFor>,
  sandbox: ReturnType<typeof inProcessSandbox>,
): Promise<void> {
  const { url } = await tm.beginAuthorization();
  const approved = await sandbox.fetch(url, { redirect: "manual" });
  await tm.completeAuthorization(approved.headers.get("location") ?? "");
}

/** Past the access token's 15 minutes. */
export const EXPIRED_MS = 16 * 60_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
