package io.github.tenantintegration.postgresstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.postgresql.PGStatement;

/**
 * A statement on a connection of the application's {@link DataSource}: checked out for it alone within
 * a bound, autocommit while held, answered within a bound ({@link Connection#setNetworkTimeout}: the
 * driver closes a connection whose server stopped answering), given back as it came, or aborted when
 * it failed at the connection (the pool then replaces it). The error of a statement that failed says
 * which statement on which row and why, by SQLSTATE, the same as the other kits ({@code
 * spec/token-store/README.md}, "The table" and "Pool"; the TypeScript kit's {@code pool.ts},
 * Python's {@code _pool.py}), and never carries a PostgreSQL error's {@code Detail} or {@code Where},
 * which can quote a row (a constraint's "Failing row contains"), and so a token.
 */
final class Pool {
    private Pool() {}

    /** Runs the bounded checkouts and the network timeouts' aborts; daemon threads, so an exit never waits. */
    static final ExecutorService WORKERS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "tenant-integration-postgres");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * A connection of {@code dataSource} within {@code timeout}, autocommit. A connection that comes after
     * the bound is closed (given back to the pool) when it comes.
     *
     * @throws StorageException {@code code} (or the SQLSTATE's) saying why, naming {@code what}
     */
    static Connection checkOut(DataSource dataSource, Duration timeout, String what, ErrorCode code) {
        Future<Connection> future =
                WORKERS.submit((java.util.concurrent.Callable<Connection>) dataSource::getConnection);
        Connection connection;
        try {
            connection = future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            WORKERS.execute(() -> closeLate(future));
            throw new StorageException(
                    code,
                    null,
                    what + " (no connection) failed: no connection of the DataSource within " + timeout.toMillis()
                            + " ms (the pool is exhausted, or the server does not answer)",
                    null);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw failure(cause, what + " (no connection)", code, false, timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(true);
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for " + what);
        }
        try {
            if (!connection.getAutoCommit()) connection.setAutoCommit(true);
        } catch (SQLException e) {
            abort(connection);
            throw failure(e, what, code, false, timeout);
        }
        return connection;
    }

    private static void closeLate(Future<Connection> future) {
        try {
            future.get().close();
        } catch (Exception ignored) {
            // It never came: nothing to give back.
        }
    }

    /**
     * Runs {@code sql} with {@code params} on {@code connection}, its answer within {@code timeout}: its
     * rows, each an array of its columns' values as strings ({@code null} kept), none for a statement
     * without.
     *
     * @throws StorageException as {@link #failure} makes it; a connection that did not answer in time
     *     was closed by the driver
     */
    static List<String[]> execute(
            Connection connection, String sql, List<?> params, Duration timeout, String what, ErrorCode code) {
        try {
            connection.setNetworkTimeout(WORKERS, (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis())));
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                // Never a named server-side prepared statement: a pooler in transaction mode (PgBouncer)
                // may run the next execution on another server connection, which does not know it.
                if (statement.isWrapperFor(PGStatement.class))
                    statement.unwrap(PGStatement.class).setPrepareThreshold(0);
                for (int i = 0; i < params.size(); i++) statement.setObject(i + 1, params.get(i));
                if (!statement.execute()) return List.of();
                List<String[]> rows = new ArrayList<>();
                try (ResultSet result = statement.getResultSet()) {
                    int columns = result.getMetaData().getColumnCount();
                    while (result.next()) {
                        String[] row = new String[columns];
                        for (int c = 0; c < columns; c++) row[c] = result.getString(c + 1);
                        rows.add(row);
                    }
                }
                return rows;
            }
        } catch (SQLException e) {
            throw failure(e, what, code, timedOut(e), timeout);
        }
    }

    /**
     * One statement on a connection of its own, checked out of {@code dataSource} and given back at once:
     * within {@code timeout} for the checkout and again for the answer. Autocommit: what it writes is
     * committed (durable, seen by every other connection) when it returns.
     */
    static List<String[]> run(DataSource dataSource, String sql, List<?> params, Duration timeout, String what) {
        Connection connection = checkOut(dataSource, timeout, what, ErrorCode.COMMAND_FAILED);
        try {
            List<String[]> rows = execute(connection, sql, params, timeout, what, ErrorCode.COMMAND_FAILED);
            giveBack(connection);
            return rows;
        } catch (RuntimeException e) {
            dropIfBroken(connection, e);
            throw e;
        }
    }

    /** Back to the pool: {@code close()} of a pool's connection gives it back. */
    static void giveBack(Connection connection) {
        try {
            connection.close();
        } catch (SQLException ignored) {
            // A pool that cannot take it back drops it.
        }
    }

    /** Gives back a connection whose statement failed, aborting it first when the failure was the connection's. */
    static void dropIfBroken(Connection connection, RuntimeException e) {
        if (e instanceof PostgresException p && !p.connectionLost) {
            giveBack(connection);
            return;
        }
        abort(connection);
    }

    /**
     * Closes {@code connection} for good: the server ends its transaction (and the locks of it), and a
     * pool finds it closed and replaces it.
     */
    static void abort(Connection connection) {
        try {
            connection.abort(WORKERS);
        } catch (SQLException | RuntimeException ignored) {
            // Closed already.
        }
        giveBack(connection);
    }

    static boolean timedOut(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof SocketTimeoutException) return true;
        }
        return false;
    }

    /** A storage failure that remembers whether its connection was lost (the pool must not lend it again). */
    static final class PostgresException extends StorageException {
        private static final long serialVersionUID = 1L;
        final transient boolean connectionLost;
        final String sqlState;

        PostgresException(ErrorCode code, String message, Throwable cause, boolean connectionLost, String sqlState) {
            super(code, null, message, cause);
            this.connectionLost = connectionLost;
            this.sqlState = sqlState;
        }
    }

    /**
     * The error of a statement ({@code what}) that failed with {@code error}: {@code SCHEMA_MISSING},
     * {@code SCHEMA_MISMATCH} or {@code READ_ONLY} when the SQLSTATE says so, else {@code code}, the
     * message saying why; the cause is the driver's error reduced to its first line and SQLSTATE.
     */
    static PostgresException failure(Throwable error, String what, ErrorCode code, boolean late, Duration timeout) {
        String state = error instanceof SQLException sql && sql.getSQLState() != null ? sql.getSQLState() : "";
        String said = firstLine(error);
        ErrorCode specific = null;
        String why;
        boolean lost = false;
        if (late) {
            why = "no answer within " + timeout.toMillis() + " ms (the server stopped answering, or is unreachable)";
            lost = true;
        } else if (state.equals("42P01")) {
            specific = ErrorCode.SCHEMA_MISSING;
            why = "the table does not exist (" + said + ", 42P01)";
        } else if (state.equals("42703") || state.equals("42804") || state.equals("23502")) {
            specific = ErrorCode.SCHEMA_MISMATCH;
            why = "the table is not this kit's (" + said + ", " + state + ")";
        } else if (state.equals("25006")) {
            specific = ErrorCode.READ_ONLY;
            why = "the server refuses writes (" + said
                    + ", 25006): it is a hot standby or read-only by default; give the storage the primary";
        } else if (state.equals("57014")) {
            why = "the server cancelled it: statement_timeout, or pg_cancel_backend (" + said + ", 57014)";
        } else if (state.equals("42501")) {
            why = said + " (42501): grant SELECT, INSERT, UPDATE and DELETE on the table";
        } else if (state.startsWith("08")
                || state.startsWith("57P0")
                || error instanceof SQLTransientConnectionException) {
            lost = true;
            why = said.toLowerCase(java.util.Locale.ROOT).contains("refused")
                    ? "PostgreSQL could not be reached (connection refused: " + said + ")"
                    : "the connection was lost or could not be made (" + said + (state.isEmpty() ? "" : ", " + state)
                            + ")";
        } else {
            why = state.isEmpty() ? said : said + " (" + state + ")";
        }
        SQLException cause = new SQLException(said, state.isEmpty() ? null : state);
        return new PostgresException(specific != null ? specific : code, what + " failed: " + why, cause, lost, state);
    }

    /** The driver's message without what may hold a value: its first line (pgjdbc adds Detail, Hint, Where on later lines). */
    static String firstLine(Throwable error) {
        String message = error.getMessage();
        if (message == null) return error.getClass().getSimpleName();
        int newline = message.indexOf('\n');
        return (newline < 0 ? message : message.substring(0, newline)).trim();
    }
}
