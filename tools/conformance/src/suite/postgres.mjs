// PostgreSQL (tools/postgres) for the runs on `postgres` storage: one server shared by the runs that
// leave it running, each run in a table of its own, and a server of its own for a run with postgres
// steps (restart, hang, resume, down, up, back).
import { findPostgres, startPostgres } from "@tenant-integration/postgres-testing";
import { schemaSql } from "@tenant-integration/token-store-postgres";
import pg from "pg";

/** The PostgreSQL to run (POSTGRES_BIN_DIR, else Debian's newest, else on PATH: tools/postgres) and its version, or undefined. */
export { findPostgres };

/**
 * Starts a PostgreSQL of its own (a new cluster on a free loopback port, tools/postgres) for runs on
 * `postgres` storage. `table(run)` makes the run's table (spec/token-store/postgres/schema.sql under a
 * name of the run's own, so the runs of every lane share the server and never a row) and returns
 * its name. The postgres steps of a run act on the whole server: `restart` (SIGKILL to the postmaster
 * and every backend, started again on the same port and data directory: crash recovery keeps every
 * committed row, and every lock is released), `hang` (SIGSTOP to all: connections stay open,
 * nothing answers), `resume`, `down` (SIGKILL: connections reset, new ones refused), `up`, `back`.
 */
export async function startPostgresService() {
  // A fleet of 100 processes (the full geometry), each with a pool that keeps a few idle connections
  // and a fresh actor after it, needs more than the default 100 (tools/postgres's 200).
  const server = await startPostgres({ settings: { max_connections: 500 } });
  /** The outage under way: "hang" or "down". */
  let outage;
  return {
    url: server.url,
    version: findPostgres()?.version,
    /** Makes the table `name` (the shared schema, version 1), on a connection of its own. */
    async table(name) {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        await client.query(schemaSql({ table: name }));
      } finally {
        await client.end();
      }
      return name;
    },
    restart: () => server.restart(),
    hang() {
      outage = "hang";
      server.hang();
    },
    resume() {
      outage = undefined;
      server.resume();
    },
    async down() {
      outage = "down";
      await server.kill();
    },
    async up() {
      outage = undefined;
      await server.start();
    },
    /** Ends the outage `hang` or `down` made. */
    back() {
      return outage === "hang" ? this.resume() : outage === "down" ? this.up() : undefined;
    },
    output: () => server.output(),
    close: () => server.close(),
  };
}

/**
 * A `records` step on the run's table `table` (spec/conformance/README.md): `refuse` adds a trigger
 * that refuses every insert, update and delete of a row of kind `intent` or `tokens` (the session's
 * records; the advisory lock and every read still work), so a write of either fails as a storage
 * error (`P0001`); `accept` drops it.
 */
export async function records(url, table, what) {
  const name = `"${table}_refuse_records"`;
  const statements =
    what === "refuse"
      ? [
          `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the conformance suite refuses writes of the session''s records'; END $$`,
          `CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON "${table}" FOR EACH ROW WHEN (NEW.kind IN ('intent', 'tokens')) EXECUTE FUNCTION ${name}()`,
          `CREATE TRIGGER "${table}_refuse_deletes" BEFORE DELETE ON "${table}" FOR EACH ROW WHEN (OLD.kind IN ('intent', 'tokens')) EXECUTE FUNCTION ${name}()`,
        ]
      : [
          `DROP TRIGGER IF EXISTS ${name} ON "${table}"`,
          `DROP TRIGGER IF EXISTS "${table}_refuse_deletes" ON "${table}"`,
          `DROP FUNCTION IF EXISTS ${name}()`,
        ];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
