/**
 * The test server itself: started, written to, restarted with what was committed, paused so that
 * nothing answers, killed so that connections are refused, and a hot standby that replays the
 * primary's writes and refuses its own. Left out with a warning without PostgreSQL (a failure in CI).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findPostgres, startPostgres, type RunningPostgres } from "@tenant-integration/postgres-testing";

const found = findPostgres();
if (!found) {
  if (process.env.CI === "true")
    throw new Error("postgres-testing: required in CI: no PostgreSQL (apt-get install -y postgresql)");
  console.warn("postgres-testing: left out: no PostgreSQL (apt-get install -y postgresql, or set POSTGRES_BIN_DIR)");
}

/** One statement on a connection of its own, which never waits longer than `timeoutMs` to connect or for its answer. */
async function once(url: string, text: string, timeoutMs = 5_000): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on("error", () => {});
  try {
    await client.connect();
    return await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
}

describe.skipIf(!found)("startPostgres", () => {
  let server: RunningPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(() => server?.close());

  it("serves a new cluster on a loopback port, as the superuser it was made with", async () => {
    expect(server.url).toBe(`postgres://tenant@127.0.0.1:${server.port}/postgres`);
    const { rows } = await once(
      server.url,
      "SELECT current_user AS who, current_setting('server_version_num')::int AS version",
    );
    expect(rows[0]).toEqual({ who: "tenant", version: expect.any(Number) });
  });

  it("keeps what was committed across a kill and restart, under a new postmaster", async () => {
    await once(server.url, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before the crash')");
    const before = server.pid;
    await server.restart();
    expect(server.pid).not.toBe(before);
    expect((await once(server.url, "SELECT v FROM kept")).rows).toEqual([{ v: "before the crash" }]);
  });

  it("answers nothing while hung, and again once resumed; refuses connections while killed", async () => {
    server.hang();
    try {
      await expect(once(server.url, "SELECT 1", 500)).rejects.toThrow();
    } finally {
      server.resume();
    }
    expect((await once(server.url, "SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await server.kill();
    await expect(once(server.url, "SELECT 1")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await server.start();
    expect((await once(server.url, "SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("makes a hot standby that replays the primary's writes and refuses its own", async () => {
    const standby = await server.standby();
    try {
      await once(server.url, "CREATE TABLE replayed (v text); INSERT INTO replayed VALUES ('from the primary')");
      let rows: unknown[] = [];
      for (let tries = 0; tries < 100 && rows.length === 0; tries++) {
        rows = await once(standby.url, "SELECT v FROM replayed").then(
          (r) => r.rows,
          () => [],
        );
        if (rows.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(rows).toEqual([{ v: "from the primary" }]);
      await expect(once(standby.url, "INSERT INTO replayed VALUES ('here')")).rejects.toMatchObject({ code: "25006" });
    } finally {
      await standby.close();
    }
  });
});
