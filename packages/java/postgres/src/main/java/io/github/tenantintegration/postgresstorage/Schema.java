package io.github.tenantintegration.postgresstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The shared table: its name, its DDL ({@code spec/token-store/postgres/schema.sql}), what the check at
 * first use reads and refuses, and {@link #ensure}, the one place the kit runs DDL, only when called
 * ({@code spec/token-store/README.md}, "The table"; the TypeScript kit's {@code schema.ts}, Python's
 * {@code _schema.py}, Go's {@code schema.go}).
 */
final class Schema {
    private Schema() {}

    /** The table every kit uses unless told another. */
    static final String DEFAULT_TABLE = "tenant_integration_records";

    /** The table's comment, which says which version of the shared schema it is. */
    static final String VERSION = "tenant-integration token store v1";

    /** One identifier part, as PostgreSQL folds an unquoted name; 48 at most so that {@code <name>_expires_at} fits 63. */
    private static final Pattern PART = Pattern.compile("[a-z_][a-z0-9_]{0,47}");

    /** The DDL, every kit's, with the table and its own name as placeholders; for the default table exactly {@code schema.sql}. */
    private static final String DDL = """
            -- The token store of the Tenant Integration SDK, shared by its TypeScript, Python and Go kits:
            -- one row per record of spec/token-store (tokens, a refresh intent, a pending sign-in), keyed by
            -- tenant origin, client id, session id and kind. Version: the table's comment.
            CREATE TABLE {table} (
              origin     text        NOT NULL, -- the tenant's origin: https://acme.tenant.test
              client_id  text        NOT NULL, -- the OAuth client id
              session    text        NOT NULL, -- the app's session id; '' without one, and for pending sign-ins
              kind       text        NOT NULL, -- tokens, intent, or pending:<first 32 hex digits of SHA-256(state)>
              value      text        NOT NULL, -- the record's JSON text, as every storage stores it
              expires_at timestamptz,          -- when a pending sign-in may be dropped; NULL: never
              updated_at timestamptz NOT NULL DEFAULT now(),
              -- The session first: an app finds and deletes a user's rows by session id alone.
              CONSTRAINT {pkey} PRIMARY KEY (session, origin, client_id, kind),
              CONSTRAINT {session} CHECK (session = '' OR session ~ '^[A-Za-z0-9._~@+=|-]{1,128}$'),
              CONSTRAINT {kind} CHECK (kind IN ('tokens', 'intent', 'pending') OR kind ~ '^pending:[0-9a-f]{32}$')
            );
            -- Expired pending sign-ins are found (and dropped) through this index, never by a scan.
            CREATE INDEX {expires_at} ON {table} (expires_at) WHERE expires_at IS NOT NULL;
            COMMENT ON TABLE {table} IS 'tenant-integration token store v1';
            """;

    /** Whether the table is there, its version, and whether the server takes writes ({@code ?}: the quoted table, four times). */
    static final String INSPECTION = "SELECT to_regclass(?) IS NOT NULL, coalesce(obj_description(to_regclass(?),"
            + " 'pg_class'), ''), obj_description(to_regclass(?), 'pg_class') IS NOT NULL, pg_is_in_recovery(),"
            + " current_setting('transaction_read_only') = 'on'";

    private static final String HOW_TO_CREATE =
            "apply its schema (PostgresStorage.schemaSql(), spec/token-store/postgres/schema.sql) with your migrations,"
                    + " or call PostgresStorage.ensureSchema(dataSource) once at start";

    /** A checked table name: as written (for messages), and its parts. */
    record Table(String text, List<String> parts) {
        /**
         * {@code name} or {@code schema.name}, each part of lowercase letters, digits and {@code _} (at most 48).
         *
         * @throws TokenManagerException {@code INVALID_OPTIONS} otherwise
         */
        static Table parse(String table) {
            List<String> parts = table == null ? List.of() : List.of(table.split("\\.", -1));
            if (parts.isEmpty()
                    || parts.size() > 2
                    || !parts.stream().allMatch(p -> PART.matcher(p).matches())) {
                throw new TokenManagerException(
                        ErrorCode.INVALID_OPTIONS,
                        "table: \"" + table
                                + "\" must be \"name\" or \"schema.name\", each of lowercase letters, digits"
                                + " and _ (at most 48), starting with a letter or _");
            }
            return new Table(table, parts);
        }

        /** The table's own name (its last part). */
        String name() {
            return parts.get(parts.size() - 1);
        }

        /** The name as SQL text, each part double-quoted (as {@code to_regclass} and the DDL take it). */
        String quoted() {
            return String.join(".", parts.stream().map(p -> "\"" + p + "\"").toList());
        }
    }

    /** The DDL of {@code table}. */
    static String ddl(Table table) {
        String name = table.name();
        return DDL.replace("{table}", table.quoted())
                .replace("{pkey}", "\"" + name + "_pkey\"")
                .replace("{session}", "\"" + name + "_session\"")
                .replace("{kind}", "\"" + name + "_kind\"")
                .replace("{expires_at}", "\"" + name + "_expires_at\"");
    }

    /** Reads whether {@code table} is there in this version on a server that takes writes: the refusal, or null. */
    static StorageException inspect(Connection connection, Table table, Duration timeout, String what) {
        String t = table.quoted();
        List<String[]> rows =
                Pool.execute(connection, INSPECTION, List.of(t, t, t), timeout, what, ErrorCode.COMMAND_FAILED);
        return refusal(table, rows.get(0));
    }

    /** The error of what the inspection found, or null for this version on a writable server. */
    static StorageException refusal(Table table, String[] row) {
        boolean found = "t".equals(row[0]);
        String version = row[1];
        boolean commented = "t".equals(row[2]);
        if ("t".equals(row[3])) {
            return new StorageException(
                    ErrorCode.READ_ONLY,
                    null,
                    "the server is a hot standby (pg_is_in_recovery() is true): the tokens must live on the primary,"
                            + " where every process reads and writes them; give the storage a DataSource of the primary",
                    null);
        }
        if ("t".equals(row[4])) {
            return new StorageException(
                    ErrorCode.READ_ONLY,
                    null,
                    "the server's transactions are read-only (default_transaction_read_only is on): give the storage"
                            + " a DataSource of the primary, or a role whose transactions may write",
                    null);
        }
        if (!found) {
            return new StorageException(
                    ErrorCode.SCHEMA_MISSING,
                    null,
                    "the table " + table.text() + " does not exist: " + HOW_TO_CREATE,
                    null);
        }
        if (!version.equals(VERSION)) {
            String what = commented ? "its comment is \"" + version + "\"" : "it has no comment";
            return new StorageException(
                    ErrorCode.SCHEMA_MISMATCH,
                    null,
                    "the table " + table.text() + " is not the kit's (" + what + ", not \"" + VERSION
                            + "\"): it may be another application's table or another version's; give the storage another"
                            + " table name, or migrate this one",
                    null);
        }
        return null;
    }

    /**
     * Creates {@code table} when it does not exist, in one transaction, under an advisory lock so that
     * processes starting together do not race in the catalog; nothing when it is this version; whether
     * it created it.
     */
    static boolean ensure(DataSource dataSource, Table table, Duration timeout) {
        String what = "ensureSchema of " + table.text();
        Connection connection = Pool.checkOut(dataSource, timeout, what, ErrorCode.COMMAND_FAILED);
        try {
            Pool.execute(connection, "BEGIN", List.of(), timeout, what, ErrorCode.COMMAND_FAILED);
            Pool.execute(
                    connection,
                    "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
                    List.of("tenant-integration:schema:" + table.quoted()),
                    timeout,
                    what,
                    ErrorCode.COMMAND_FAILED);
            StorageException refused = inspect(connection, table, timeout, what);
            if (refused != null && refused.code() != ErrorCode.SCHEMA_MISSING) throw refused;
            if (refused != null)
                Pool.execute(connection, ddl(table), List.of(), timeout, what, ErrorCode.COMMAND_FAILED);
            Pool.execute(connection, "COMMIT", List.of(), timeout, what, ErrorCode.COMMAND_FAILED);
            Pool.giveBack(connection);
            return refused != null;
        } catch (RuntimeException e) {
            // Nothing is kept: the connection is closed, and the server rolls the transaction back.
            Pool.abort(connection);
            throw e;
        }
    }
}
