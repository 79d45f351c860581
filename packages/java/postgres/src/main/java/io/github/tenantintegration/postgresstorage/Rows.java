package io.github.tenantintegration.postgresstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.StorageException;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The row of each record name: split into session id and kind after the storage's tenant origin and
 * client id ({@code spec/token-store/README.md}, "Rows: a storage is made for one tenant and client";
 * the TypeScript kit's {@code rows.ts}, Python's {@code _rows.py}). No I/O.
 *
 * <p>A client id may hold {@code :} ({@code urn:app:1}), so a name alone does not say where the client
 * id ends and the session id begins: a storage is made for one origin and client id, the manager's,
 * and splits each name after {@code tenant-integration:<origin>:<clientId>:}.
 */
final class Rows {
    private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9\\-._~@+=|]{1,128}");
    private static final Pattern PENDING_BY_STATE = Pattern.compile("pending:[0-9a-f]{32}");

    private Rows() {}

    /** The primary key of a record's row. */
    record Row(String origin, String clientId, String session, String kind) {
        /** The key as the statements' first four parameters: session, origin, client id, kind (the primary key's order). */
        List<String> params() {
            return List.of(session, origin, clientId, kind);
        }

        /**
         * The row as a condition a user can paste into a query, never its value: {@code records (origin,
         * client_id, session, kind) = ('https://acme.tenant.test', 'demo', '42', 'tokens')}.
         */
        String describe(String table) {
            return table + " (origin, client_id, session, kind) = (" + quote(origin) + ", " + quote(clientId) + ", "
                    + quote(session) + ", " + quote(kind) + ")";
        }
    }

    /** The tenant origin and client id a storage is made for: the manager's. */
    record Scope(String origin, String clientId) {
        /**
         * The row of the manager's name {@code name}.
         *
         * @throws StorageException {@code UNKNOWN_NAME} for a name of another tenant or client, a lock's, or
         *     anything the manager does not store
         */
        Row row(String name) {
            String prefix = "tenant-integration:" + origin + ":" + clientId + ":";
            if (!name.startsWith(prefix)) {
                throw new StorageException(
                        ErrorCode.UNKNOWN_NAME,
                        null,
                        "\"" + name + "\" is not a record of " + origin + " and client \"" + clientId
                                + "\", the tenant and client this storage was made for: give PostgresStorage the manager's"
                                + " own baseUrl and clientId",
                        null);
            }
            String tail = name.substring(prefix.length());
            if (tail.equals("tokens")
                    || tail.equals("intent")
                    || tail.equals("pending")
                    || PENDING_BY_STATE.matcher(tail).matches()) {
                return new Row(origin, clientId, "", tail);
            }
            int colon = tail.lastIndexOf(':');
            if (colon > 0) {
                String session = tail.substring(0, colon);
                String kind = tail.substring(colon + 1);
                if (SESSION_ID.matcher(session).matches() && (kind.equals("tokens") || kind.equals("intent")))
                    return new Row(origin, clientId, session, kind);
            }
            throw new StorageException(
                    ErrorCode.UNKNOWN_NAME,
                    null,
                    "\"" + name + "\" is not a record of the token manager's (tokens, intent or a pending sign-in, of "
                            + origin + " and client \"" + clientId + "\")",
                    null);
        }
    }

    /** {@code text} as an SQL string literal. */
    static String quote(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
