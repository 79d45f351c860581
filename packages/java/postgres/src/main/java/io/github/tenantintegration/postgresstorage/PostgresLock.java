package io.github.tenantintegration.postgresstorage;

import io.github.tenantintegration.postgresstorage.Pool.PostgresException;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Held;
import io.github.tenantintegration.tokenmanager.LockWaitEndedException;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.github.tenantintegration.tokenmanager.WaitingLock;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The refresh lock on PostgreSQL, the same in every kit ({@code spec/token-store/README.md}, "The
 * refresh lock"; the TypeScript kit's {@code lock.ts}, Python's {@code _lock.py}, Go's {@code lock.go}):
 * a transaction-scoped advisory lock on {@code hashtextextended(<lock name>, 0)}, held in a transaction
 * on a connection of the application's DataSource while the task runs. The server releases it when the
 * transaction ends: at the release ({@code ROLLBACK}), or when the holder's connection closes (the
 * process was killed, its machine vanished past the server's TCP keepalives). A holder that is paused
 * but lives keeps it. Nothing is written in the lock's transaction.
 *
 * <p>A waiter blocks in the server in slices of {@code lock_timeout}, in SHARE mode, which conflicts with
 * the holder's exclusive lock only: a release wakes every waiter at once, and each asks {@code until}
 * (the manager's "the stored record is fresh now") before it tries the lock. Works through PgBouncer in
 * transaction mode (everything is in one transaction; session {@code SET}s are not used). See RFC 9700
 * §4.14.2.
 */
final class PostgresLock implements WaitingLock {
    /** The holder of a lock, for the message of a wait that ran out ({@code ?}: the lock's name, twice). */
    static final String HOLDER = "SELECT l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), ''),"
            + " coalesce(a.xact_start::text, '') FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
            + " WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' AND l.granted AND l.objsubid = 1"
            + " AND l.classid::bigint = (hashtextextended(?, 0) >> 32) & 4294967295"
            + " AND l.objid::bigint = hashtextextended(?, 0) & 4294967295";

    private final PostgresStorage storage;

    PostgresLock(PostgresStorage storage) {
        this.storage = storage;
    }

    @Override
    public <T> T withLock(String name, Task<T> task) {
        return withLockUntil(name, null, task);
    }

    @Override
    public <T> T withLockUntil(String name, BooleanSupplier until, Task<T> task) {
        PostgresStorage.Options o = storage.options;
        long deadline = System.nanoTime() + o.waitTimeout().toNanos();
        try {
            if (!storage.slots.tryAcquire(o.waitTimeout().toNanos(), TimeUnit.NANOSECONDS)) {
                throw new StorageException(
                        ErrorCode.LOCK_TIMEOUT,
                        name,
                        "the lock " + name + ": no connection of the DataSource came free for the lock within "
                                + o.waitTimeout().toMillis() + " ms (this process's other refreshes hold all "
                                + o.maxLockConnections() + " the locks may use)",
                        null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the lock " + name);
        }
        try {
            Transaction held = acquire(name, deadline, until);
            try {
                return task.run(held);
            } finally {
                held.end();
            }
        } finally {
            storage.slots.release();
        }
    }

    /**
     * Checks a connection out, opens the lock's transaction and takes the lock, waiting in slices until it
     * is granted, {@code until} says the wait is no longer needed ({@link LockWaitEndedException}), or the
     * deadline passes ({@code LOCK_TIMEOUT}). A failure is {@code LOCK_UNAVAILABLE} (or {@code READ_ONLY}).
     */
    private Transaction acquire(String name, long deadline, BooleanSupplier until) {
        PostgresStorage.Options o = storage.options;
        Duration timeout = Duration.ofNanos(
                Math.max(1_000_000, Math.min(o.commandTimeout().toNanos(), deadline - System.nanoTime())));
        Connection connection =
                Pool.checkOut(storage.dataSource, timeout, "taking the lock " + name, ErrorCode.LOCK_UNAVAILABLE);
        Transaction held = new Transaction(name, connection, o);
        try {
            boolean taken = held.open();
            while (!taken) {
                boolean released = held.waitSlice();
                if (until != null && until.getAsBoolean()) {
                    held.end();
                    throw new LockWaitEndedException();
                }
                taken = held.tryLock();
                if (taken) break;
                if (released) {
                    // Lost to other waiters woken with this one: they let their shares go within a round trip.
                    sleepMillis(5 + ThreadLocalRandom.current().nextInt(21));
                }
                if (System.nanoTime() > deadline) {
                    String holder = held.holder();
                    held.end();
                    throw new StorageException(
                            ErrorCode.LOCK_TIMEOUT,
                            name,
                            "the lock " + name + " (the advisory lock hashtextextended of that name) was still held"
                                    + holder + " after " + o.waitTimeout().toMillis() + " ms",
                            null);
                }
            }
            return held;
        } catch (LockWaitEndedException | TokenManagerException e) {
            if (!(e instanceof TokenManagerException t && t.code() == ErrorCode.LOCK_TIMEOUT)) held.fail();
            throw e;
        } catch (RuntimeException | Error e) {
            held.fail(); // the connection goes, and the lock with it
            throw e;
        }
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the lock");
        }
    }

    /**
     * The connection whose transaction holds (or waits for) the lock {@code name}; its {@link #isHeld} is
     * "the lock is still held": the connection still answers {@code SELECT 1} in its transaction.
     */
    static final class Transaction implements Held {
        private final String name;
        private final Connection connection;
        private final PostgresStorage.Options options;
        private volatile boolean gone;

        Transaction(String name, Connection connection, PostgresStorage.Options options) {
            this.name = name;
            this.connection = connection;
            this.options = options;
        }

        private List<String[]> step(String sql, List<?> params, Duration timeout) {
            return Pool.execute(
                    connection, sql, params, timeout, "taking the lock " + name, ErrorCode.LOCK_UNAVAILABLE);
        }

        private List<String[]> step(String sql, List<?> params) {
            return step(sql, params, options.commandTimeout());
        }

        /** Begins the transaction, sets it up and tries the lock once. */
        boolean open() {
            step("BEGIN", List.of());
            StringBuilder sql = new StringBuilder("SELECT set_config('lock_timeout', ?, true)");
            List<Object> params = new java.util.ArrayList<>();
            params.add(Math.max(1, options.waitSlice().toMillis()) + "ms");
            Keepalives k = options.keepalives();
            if (k != null) {
                sql.append(", set_config('tcp_keepalives_idle', ?, true)")
                        .append(", set_config('tcp_keepalives_interval', ?, true)")
                        .append(", set_config('tcp_keepalives_count', ?, true)");
                params.add(Integer.toString(k.idle()));
                params.add(Integer.toString(k.interval()));
                params.add(Integer.toString(k.count()));
            }
            sql.append(", pg_is_in_recovery(), current_setting('transaction_read_only') = 'on',"
                    + " pg_try_advisory_xact_lock(hashtextextended(?, 0))");
            params.add(name);
            String[] row = step(sql.toString(), params).get(0);
            boolean standby = "t".equals(row[row.length - 3]);
            boolean readOnly = "t".equals(row[row.length - 2]);
            if (standby || readOnly) {
                String which = standby ? "is a hot standby" : "is read-only (default_transaction_read_only)";
                throw new StorageException(
                        ErrorCode.READ_ONLY,
                        name,
                        "taking the lock " + name + ": the server " + which
                                + "; a lock there would coordinate nobody: give the storage a DataSource of the primary",
                        null);
            }
            return "t".equals(row[row.length - 1]);
        }

        /**
         * Blocks in the server until the holder lets go or {@code lock_timeout} passes, and holds nothing
         * after it; whether the holder let go within the slice. In SHARE mode, which conflicts with the
         * holder's exclusive lock only, so a release wakes every waiter at once; {@code ROLLBACK TO
         * SAVEPOINT} lets the share go. Waiting for the exclusive lock itself would make a convoy.
         */
        boolean waitSlice() {
            step("SAVEPOINT tenant_integration_wait", List.of());
            boolean released = true;
            try {
                step(
                        "SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 0))",
                        List.of(name),
                        options.waitSlice().plus(options.commandTimeout()));
            } catch (PostgresException e) {
                // 55P03: lock_timeout ran out; 57014: a shorter statement_timeout did. The lock is still another's.
                if (!"55P03".equals(e.sqlState) && !"57014".equals(e.sqlState)) throw e;
                released = false;
            }
            step("ROLLBACK TO SAVEPOINT tenant_integration_wait", List.of());
            return released;
        }

        boolean tryLock() {
            return "t"
                    .equals(step("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))", List.of(name))
                            .get(0)[0]);
        }

        /** The holder of the lock, for the message of a wait that ran out ({@code ""} when unknown). */
        String holder() {
            List<String[]> rows;
            try {
                rows = step(HOLDER, List.of(name, name));
            } catch (StorageException e) {
                return "";
            }
            if (rows.isEmpty()) return "";
            String[] r = rows.get(0);
            StringBuilder text = new StringBuilder(" by the server process " + r[0]);
            if (!r[1].isEmpty())
                text.append(", application_name \"").append(r[1]).append('"');
            if (!r[2].isEmpty()) text.append(", client ").append(r[2]);
            if (!r[3].isEmpty()) text.append(", its transaction open since ").append(r[3]);
            return text.toString();
        }

        /**
         * "The lock is still held" (the refresh protocol's steps 3 and 5): {@code SELECT 1} answers in the
         * lock's transaction. False once the connection was lost (the server restarted, the backend was
         * terminated, {@code idle_in_transaction_session_timeout}: the server released the lock with it),
         * or gave no answer within the command timeout (the connection is then dropped).
         */
        @Override
        public boolean isHeld() {
            if (gone) return false;
            try {
                step("SELECT 1", List.of());
            } catch (StorageException e) {
                fail();
                return false;
            }
            return true;
        }

        /** Drops the connection after a failed statement: the server ends the transaction, and the lock with it. */
        void fail() {
            if (gone) return;
            gone = true;
            Pool.abort(connection);
        }

        /**
         * Ends the lock's transaction ({@code ROLLBACK}: nothing was written in it), which releases the
         * lock, and gives the connection back; one that fails is dropped instead, which releases it too.
         */
        void end() {
            if (gone) return;
            try {
                step("ROLLBACK", List.of());
            } catch (StorageException e) {
                fail();
                return;
            }
            gone = true;
            Pool.giveBack(connection);
        }
    }
}
