package io.github.tenantintegration.redisstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Held;
import io.github.tenantintegration.tokenmanager.LockWaitEndedException;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.github.tenantintegration.tokenmanager.WaitingLock;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The refresh lock on Redis: a lease ({@code SET key owner NX PX lease}, a random 128-bit owner) that only
 * its owner renews (compare-and-{@code PEXPIRE}, every renew period while the task runs) or releases
 * (compare-and-{@code DEL}, then {@code PUBLISH <key>:released ""}), with a bounded wait that wakes on a
 * release announcement (a subscription on a connection of its own, for the time of the wait; polling
 * without one). The task's {@link Held} reads the key ({@code GET}): the manager asks right before a
 * refresh leaves, and sends nothing when a paused holder's lease was taken over.
 *
 * <p>A {@code SET NX} whose reply did not come in time may still have taken the lease (a stopped server
 * that resumes): its owner is remembered, and released (compare-and-delete, then the announcement) once
 * the reply comes or before this process next tries that lock, so that nobody waits out a lease that
 * nobody holds (the lead's decision D4).
 */
final class RedisLock implements WaitingLock {
    /** The other kits' scripts, byte for byte: release and renew only while the key still holds this owner's value. */
    static final String RELEASE =
            "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then return redis.call(\"DEL\", KEYS[1]) end return 0";

    static final String RENEW =
            "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then return redis.call(\"PEXPIRE\", KEYS[1], ARGV[2]) end return 0";

    private static final SecureRandom RANDOM = new SecureRandom();

    private static final ScheduledExecutorService RENEWALS = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "tenant-integration-redis-renew");
        thread.setDaemon(true);
        return thread;
    });

    private final RedisStorage storage;

    /** Owners whose SET NX reply did not come in time, by lock key: released when this process next reaches Redis. */
    private final Map<String, Set<String>> unanswered = new ConcurrentHashMap<>();

    RedisLock(RedisStorage storage) {
        this.storage = storage;
    }

    private static String newOwner() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** The lock's failure on a Redis error: {@code STORAGE_FAILED}, the code of a failed read or write, with {@code LOCK_UNAVAILABLE} as cause. */
    private static TokenManagerException unavailable(StorageException cause) {
        StorageException lock = new StorageException(ErrorCode.LOCK_UNAVAILABLE, cause.path(), cause.reason(), null);
        return new TokenManagerException(
                ErrorCode.STORAGE_FAILED, "the Redis lock cannot be taken: " + cause.reason(), lock);
    }

    @Override
    public <T> T withLock(String name, Task<T> task) {
        return withLockUntil(name, null, task);
    }

    @Override
    public <T> T withLockUntil(String name, BooleanSupplier until, Task<T> task) {
        String key = storage.key(name);
        String owner = newOwner();
        acquire(key, owner, until);
        Holding holding = new Holding(key, owner);
        try {
            return task.run(holding);
        } finally {
            holding.release();
        }
    }

    private boolean take(String key, String owner) {
        releaseUnanswered(key);
        AtomicReference<CompletableFuture<String>> sent = new AtomicReference<>();
        try {
            return "OK"
                    .equals(storage.call(
                            () -> {
                                CompletableFuture<String> reply = storage.connection
                                        .async
                                        .set(
                                                key,
                                                owner,
                                                SetArgs.Builder.nx()
                                                        .px(storage.options
                                                                .lease()
                                                                .toMillis()))
                                        .toCompletableFuture();
                                sent.set(reply);
                                return reply;
                            },
                            ErrorCode.LOCK_UNAVAILABLE,
                            "SET NX",
                            key));
        } catch (StorageException e) {
            CompletableFuture<String> reply = sent.get();
            if (reply != null && !reply.isDone()) {
                unanswered
                        .computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet())
                        .add(owner);
                reply.whenComplete((taken, error) -> {
                    if ("OK".equals(taken)) releaseOwn(key, owner);
                });
            }
            throw unavailable(e);
        }
    }

    /** Releases the leases this process's unanswered SET NX may have taken (D4). */
    private void releaseUnanswered(String key) {
        Set<String> owners = unanswered.get(key);
        if (owners == null) return;
        for (String owner : Set.copyOf(owners)) {
            try {
                releaseOwn(key, owner);
                owners.remove(owner);
            } catch (StorageException e) {
                return; // not reached yet: the next try again
            }
        }
    }

    private void acquire(String key, String owner, BooleanSupplier until) {
        long deadline = System.nanoTime() + storage.options.waitTimeout().toNanos();
        Subscription subscription = null;
        try {
            for (int attempt = 0; ; attempt++) {
                if (take(key, owner)) return;
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new StorageException(
                            ErrorCode.LOCK_TIMEOUT,
                            key,
                            key + " still held by another owner after "
                                    + storage.options.waitTimeout().toMillis() + " ms",
                            null);
                }
                if (attempt == 0) {
                    // Subscribed before the next try, so that a release between the two tries is not missed.
                    subscription = Subscription.open(
                            storage,
                            Keys.releasedChannel(key),
                            Duration.ofNanos(
                                    Math.min(storage.options.commandTimeout().toNanos(), left)));
                    if (subscription != null) continue;
                }
                // Backoff, then jitter in its upper half, so that a fleet released together does not retry in
                // step. An announcement ends the pause at once: one SET per waiter per release. So a subscribed
                // waiter polls only for a release no announcement tells of (a lease that ran out, a denied
                // PUBLISH), every longest pause: polling on the short backoff as well, a fleet's waiters sent
                // several SETs per wait while the holder refreshed, and that load slowed every holder (issue
                // 39; the other kits alike). Unsubscribed, it polls on the backoff.
                double backoff = storage.options.maxRetryDelay().toNanos();
                if (subscription == null)
                    backoff = Math.min(
                            backoff, storage.options.retryDelay().toNanos() * Math.pow(2, Math.min(attempt, 30)));
                long pause = Math.min(
                        deadline - System.nanoTime(), (long) (backoff / 2 + RANDOM.nextDouble() * backoff / 2));
                Subscription.next(subscription, Math.max(0, pause));
                if (until != null && until.getAsBoolean()) throw new LockWaitEndedException();
            }
        } finally {
            if (subscription != null) subscription.close();
        }
    }

    /** Compare-and-DEL; announces the release when it deleted the key. The number of keys deleted. */
    long releaseOwn(String key, String owner) {
        Long released = storage.call(
                () -> storage.connection.async.<Long>eval(RELEASE, ScriptOutputType.INTEGER, new String[] {key}, owner),
                ErrorCode.COMMAND_FAILED,
                "EVAL (release)",
                key);
        if (released != null && released == 1) announce(key);
        return released == null ? 0 : released;
    }

    /** PUBLISH "" on the release channel; a failure (an ACL, Redis gone) is ignored: the waiters poll. */
    private void announce(String key) {
        try {
            storage.call(
                    () -> storage.connection.async.publish(Keys.releasedChannel(key), ""),
                    ErrorCode.COMMAND_FAILED,
                    "PUBLISH",
                    key);
        } catch (StorageException e) {
            storage.options
                    .logger()
                    .log(System.Logger.Level.DEBUG, "the release of " + key + " was not announced: " + e.reason());
        }
    }

    /** A taken lock: renewed until released; a loss reported once. */
    private final class Holding implements Held {
        private final String key;
        private final String owner;
        private final ReentrantLock mu = new ReentrantLock();
        private boolean stopped;
        private boolean reported;
        private long renewedAt = System.nanoTime();
        private final ScheduledFuture<?> renewals;

        Holding(String key, String owner) {
            this.key = key;
            this.owner = owner;
            long every = storage.options.renewEvery().toMillis();
            this.renewals = RENEWALS.scheduleWithFixedDelay(
                    () -> RedisStorage.WORKERS.execute(this::renew), every, every, TimeUnit.MILLISECONDS);
        }

        private boolean isStopped() {
            mu.lock();
            try {
                return stopped;
            } finally {
                mu.unlock();
            }
        }

        private void lost(String why) {
            boolean report;
            mu.lock();
            try {
                stopped = true;
                report = !reported;
                reported = true;
            } finally {
                mu.unlock();
            }
            renewals.cancel(false);
            if (report) {
                storage.options
                        .onLeaseLost()
                        .accept(new StorageException(
                                ErrorCode.LEASE_LOST,
                                key,
                                key + ": " + why + "; the task under the lock was not stopped",
                                null));
            }
        }

        private void renew() {
            if (isStopped()) return;
            Long reply;
            try {
                reply = storage.call(
                        () -> storage.connection.async.<Long>eval(
                                RENEW,
                                ScriptOutputType.INTEGER,
                                new String[] {key},
                                owner,
                                Long.toString(storage.options.lease().toMillis())),
                        ErrorCode.COMMAND_FAILED,
                        "EVAL (renew)",
                        key);
            } catch (TokenManagerException e) {
                long since;
                mu.lock();
                try {
                    since = System.nanoTime() - renewedAt;
                } finally {
                    mu.unlock();
                }
                if (since >= storage.options.lease().toNanos() && !isStopped())
                    lost("no renewal succeeded for " + storage.options.lease().toMillis() + " ms");
                return;
            }
            if (isStopped()) return;
            if (reply == null || reply != 1) {
                lost("a renewal found another owner, or no lock");
                return;
            }
            mu.lock();
            try {
                renewedAt = System.nanoTime();
            } finally {
                mu.unlock();
            }
        }

        /** Reads the key: whether it still holds this owner's value (false too when Redis fails). */
        @Override
        public boolean isHeld() {
            if (isStopped()) return false;
            String value;
            try {
                value = storage.call(() -> storage.connection.async.get(key), ErrorCode.COMMAND_FAILED, "GET", key);
            } catch (TokenManagerException e) {
                return false;
            }
            if (owner.equals(value)) return true;
            lost("the lease was found taken over (or expired) before the task's next step");
            return false;
        }

        void release() {
            boolean alreadyLost;
            mu.lock();
            try {
                alreadyLost = stopped;
                stopped = true;
            } finally {
                mu.unlock();
            }
            renewals.cancel(false);
            long released;
            try {
                released = releaseOwn(key, owner);
            } catch (TokenManagerException e) {
                return; // a failed release only leaves the lease to expire (at most the lease)
            }
            if (released != 1 && !alreadyLost)
                lost("at release the lock was no longer this owner's (the lease expired under the task)");
        }
    }
}
