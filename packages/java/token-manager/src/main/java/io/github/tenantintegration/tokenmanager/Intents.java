package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.ProcessIdentity;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The refresh intent ({@code spec/token-store/README.md}, "Paused processes", steps 2, 4 and 7): stored
 * right before a refresh request leaves and deleted once its outcome is stored, it says which refresh
 * token (a SHA-256 fingerprint, never the token) is being presented, by which refresh, since when
 * and by which process. A process about to present the same token waits for it, outside the lock.
 *
 * <p>When a waiter gives up on a live intent is the lead's decision D1 (issue 36): an intent naming
 * the refresh token about to be presented is live unless its holder is a process of this host that
 * has exited, or <em>this process has watched it (the same {@code holder}) for {@code intentWait}
 * without a break</em>. A watch starts at the first successful read that finds the intent and goes
 * on while this process keeps reading it successfully; a failed read ends it, and so do two
 * successive successful reads more than 1 000 ms apart on the monotonic clock (this process was
 * paused, or was not asking). The intent's {@code since} is never used to give up on it: its age
 * measures an outage of the storage as well as the holder.
 */
final class Intents {
    /** How often a process that honours another's intent reads the storage again. */
    static final long POLL_MS = 50;

    /** Two reads further apart than this break a watch (D1). */
    static final long BREAK_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);

    private Intents() {}

    /** This process's watch of another process's intent (D1); guarded by the manager's {@code mu}. */
    static final class Watch {
        private String holder;
        private long since; // the intent's since at the last read: another one is a beat (D7)
        private long started;
        private long lastRead;

        /**
         * A successful read found {@code intent} (or none, when null) at {@code now} (nanoTime). The
         * watch restarts for another holder, after a break, or when the same holder shows another
         * {@code since}: it beat, so it lives (D7).
         */
        void saw(IntentRecord intent, long now) {
            if (intent == null) {
                holder = null;
                return;
            }
            boolean continues =
                    intent.holder().equals(holder) && intent.since() == since && now - lastRead <= BREAK_NANOS;
            if (!continues) {
                holder = intent.holder();
                started = now;
            }
            since = intent.since();
            lastRead = now;
        }

        /** A read of the storage failed: the watch ends. */
        void broken() {
            holder = null;
        }

        /** How long the intent of {@code holder} has been watched without a break, in nanoseconds. */
        long watched(String holder, long now) {
            return holder.equals(this.holder) ? now - started : 0;
        }
    }

    /** Another process's live intent naming the refresh token about to be presented: released, waited for. */
    static final class Pending extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient IntentRecord intent;
        final String recordId;

        Pending(IntentRecord intent, String recordId) {
            super("waiting for the refresh by " + intent.describe(), null, false, false);
            this.intent = intent;
            this.recordId = recordId;
        }
    }

    /**
     * A read of the storage, or its lock, failed (an outage, a hung server, a command timeout, an I/O
     * error): the watch ends, and the next read that finds the intent starts a new one from zero (D1).
     * An outage thus never counts as watching: the holder may be alive and writing its tokens again
     * once the storage answers.
     */
    static void endWatch(TokenManager m) {
        m.mu.lock();
        try {
            m.watch.broken();
        } finally {
            m.mu.unlock();
        }
    }

    /** Whether {@code e} says the storage (or its lock) could not be reached: {@code STORAGE_FAILED}, {@code IO_FAILED}, {@code LOCK_TIMEOUT}. */
    static boolean isStorageFailure(TokenManagerException e) {
        return e.code() == ErrorCode.STORAGE_FAILED
                || e.code() == ErrorCode.IO_FAILED
                || e.code() == ErrorCode.LOCK_TIMEOUT;
    }

    /**
     * Reads the intent, updating the watch: empty when there is none or the value is not an intent
     * record (logged once, D2).
     *
     * @throws TokenManagerException {@code STORAGE_FAILED} when the read fails (the watch ends)
     */
    static Optional<IntentRecord> read(TokenManager m) {
        Optional<String> raw;
        try {
            raw = m.storage.get(m.intentKey);
        } catch (RuntimeException e) {
            endWatch(m);
            throw Session.storageFailed(m, e);
        }
        Optional<IntentRecord> intent = raw.flatMap(IntentRecord::parse);
        m.mu.lock();
        try {
            if (raw.isPresent() && intent.isEmpty() && !m.warnedForeignIntent) {
                m.warnedForeignIntent = true;
                m.log(
                        System.Logger.Level.WARNING,
                        "the value under " + m.storage.where(m.intentKey)
                                + " is not a refresh intent record; it reads as absent and the next intent replaces it");
            }
            m.watch.saw(intent.orElse(null), System.nanoTime());
        } finally {
            m.mu.unlock();
        }
        return intent;
    }

    /**
     * Step 2: whether {@code intent} is another process's live refresh with {@code stored}'s refresh
     * token, to be waited for (D1).
     */
    static boolean mustWaitFor(TokenManager m, IntentRecord intent, TokenRecord stored) {
        if (!intent.fingerprint().equals(TokenRecord.fingerprint(stored.refreshToken))) return false;
        long watched;
        m.mu.lock();
        try {
            if (m.ownIntent != null && m.ownIntent.holder().equals(intent.holder())) return false;
            watched = m.watch.watched(intent.holder(), System.nanoTime());
        } finally {
            m.mu.unlock();
        }
        if (gone(intent)) {
            m.log(
                    System.Logger.Level.WARNING,
                    "the refresh intent on this refresh token was left by a process that has exited; presenting the token",
                    "holder",
                    intent.describe());
            return false;
        }
        if (watched >= m.intentWait.toNanos()) {
            m.log(
                    System.Logger.Level.WARNING,
                    "watched the refresh with this refresh token for the whole intent wait without its tokens being stored; presenting the token",
                    "holder",
                    intent.describe(),
                    "intent_wait_ms",
                    m.intentWait.toMillis(),
                    "intent_age_ms",
                    Math.round(m.nowMs() - intent.since()));
            return false;
        }
        return true;
    }

    static boolean gone(IntentRecord intent) {
        return intent.pid() > 0 && intent.host() != null && ProcessIdentity.isGone(intent.host(), intent.pid());
    }

    /**
     * Waits outside the lock (the intent's holder may need it to write its tokens back), polling every
     * 50 ms, until the record is no longer the one read, the intent is no longer {@code pending}'s, its
     * holder has exited, or this process has watched it for {@code intentWait} without a break.
     *
     * @throws TokenManagerException {@code STORAGE_FAILED} when a poll fails (the watch ends);
     *     {@code ABORTED} when interrupted
     */
    static void await(TokenManager m, Pending pending) {
        while (true) {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TokenManagerException(
                        ErrorCode.ABORTED, "interrupted while waiting for another process's refresh");
            }
            TokenRecord latest;
            try {
                latest = TokenRecord.parse(m.storage.get(m.tokensKey).orElse(null))
                        .orElse(null);
            } catch (RuntimeException e) {
                endWatch(m);
                throw Session.storageFailed(m, e);
            }
            Optional<IntentRecord> intent = read(m);
            if (latest == null || !latest.id.equals(pending.recordId)) return;
            if (intent.isEmpty() || !intent.get().holder().equals(pending.intent.holder())) return;
            if (gone(intent.get())) return;
            long watched;
            m.mu.lock();
            try {
                watched = m.watch.watched(pending.intent.holder(), System.nanoTime());
            } finally {
                m.mu.unlock();
            }
            if (watched >= m.intentWait.toNanos()) return;
        }
    }

    /**
     * The message of a refresh refused because its intent could not be written (D6), the same in
     * every kit.
     */
    static String unwritable(String why) {
        return "the refresh intent could not be written (" + why
                + "), so the refresh was not sent; the stored tokens are unchanged and the next call tries again";
    }

    /**
     * Step 4: stores this process's intent to present {@code stored}'s refresh token. No intent, no
     * send (D6): an intent the storage did not confirm (any error, a command timeout) is
     * {@code STORAGE_FAILED} saying so and why, and nothing is sent.
     *
     * @return the intent, or null when this storage keeps no intents
     * @throws LockLost when the lock is no longer held
     * @throws TokenManagerException {@code STORAGE_FAILED} when the intent could not be written
     */
    static IntentRecord write(TokenManager m, Held held, TokenRecord stored) {
        if (!m.intents) return null;
        if (!held.isHeld()) throw new LockLost();
        IntentRecord intent = new IntentRecord(
                TokenRecord.fingerprint(stored.refreshToken),
                States.random(),
                Math.round(m.nowMs()),
                ProcessIdentity.pid(),
                ProcessIdentity.host());
        try {
            m.storage.set(m.intentKey, intent.serialize());
        } catch (RuntimeException e) {
            // No intent, no send (D6): under the lock alone, a rotation whose tokens could not be
            // written either would be known only to this process, and another, finding no intent,
            // would present the rotated-away token. An intent the storage may still apply later is
            // deleted again where it can be.
            m.log(
                    System.Logger.Level.WARNING,
                    "the refresh intent could not be stored; the refresh is not sent (no intent, no send), and the next call tries again");
            drop(m, intent);
            Throwable cause = Scrubbed.of(e, m.known(List.of(stored.accessToken, stored.refreshToken)));
            String why = cause instanceof TokenManagerException own ? own.reason() : String.valueOf(cause.getMessage());
            throw new TokenManagerException(ErrorCode.STORAGE_FAILED, unwritable(why), cause);
        }
        Beat beat = new Beat(m, intent);
        boolean closed;
        m.mu.lock();
        try {
            m.ownIntent = intent;
            closed = m.closed;
            if (!closed) m.ownBeat = beat;
        } finally {
            m.mu.unlock();
        }
        if (!closed) beat.start();
        return intent;
    }

    /** Deletes the stored intent if it is still ours. A failure leaves it behind, for the others to watch out. */
    static void drop(TokenManager m, IntentRecord intent) {
        if (intent == null) return;
        Beat beat = null;
        m.mu.lock();
        try {
            if (m.ownIntent == intent) {
                m.ownIntent = null;
                beat = m.ownBeat;
                m.ownBeat = null;
            }
        } finally {
            m.mu.unlock();
        }
        if (beat != null) beat.stop(); // no beat's write lands after the delete below
        try {
            Optional<IntentRecord> stored = m.storage.get(m.intentKey).flatMap(IntentRecord::parse);
            if (stored.isPresent() && stored.get().holder().equals(intent.holder())) m.storage.delete(m.intentKey);
        } catch (RuntimeException e) {
            m.log(
                    System.Logger.Level.WARNING,
                    "the refresh intent could not be deleted; the others watch it for the intent wait");
        }
    }

    /**
     * Step 5, right before each attempt of a refresh leaves: the stored record is still {@code stored}
     * (else another process stored tokens meanwhile: false, decide again with them), and the lock still
     * this process's own (else {@link LockLost}). Either way the intent is dropped first. As the
     * TypeScript kit's {@code stillOurs}.
     */
    static boolean stillOurs(TokenManager m, Held held, TokenRecord stored, IntentRecord intent) {
        if (stored != m.unsaved) {
            TokenRecord latest;
            try {
                latest = Session.load(m);
            } catch (TokenManagerException e) {
                drop(m, intent);
                throw e;
            }
            if (latest == null || !latest.id.equals(stored.id)) {
                drop(m, intent);
                m.log(System.Logger.Level.DEBUG, "the stored tokens changed before the refresh left; using them");
                return false;
            }
        }
        if (!held.isHeld()) {
            drop(m, intent);
            throw new LockLost();
        }
        return true;
    }

    /**
     * Stops the beats of this process's own intent, if any (closed or signed out); the intent stays
     * stored, and a waiter gives it up once it has watched it for the intent wait without a beat.
     */
    static void stopBeats(TokenManager m) {
        Beat beat;
        m.mu.lock();
        try {
            beat = m.ownBeat;
            m.ownBeat = null;
        } finally {
            m.mu.unlock();
        }
        if (beat != null) beat.stop();
    }

    /** How often a holder rewrites its intent (D7): every second, or a quarter of the intent wait when shorter. */
    static long beatMillis(TokenManager m) {
        return Math.max(1, Math.min(1000, m.intentWait.toMillis() / 4));
    }

    /**
     * The beats of this process's own stored intent (D7; {@code spec/token-store/README.md}, "Paused
     * processes"): from the moment the intent is stored until it is deleted, a daemon thread rewrites
     * it every {@link #beatMillis} (monotonic) with a new {@code since}, so that a waiter, whose watch
     * restarts at each beat, waits for a holder that runs however slowly the tenant answers. The beats
     * go on while the request is in flight, during retry pauses and while unsaved tokens are written
     * again.
     */
    static final class Beat {
        private final CountDownLatch stopped = new CountDownLatch(1);
        private final Thread thread;
        // Held while a beat's write is sent; halted is set under it: once stop returns, no beat's
        // write is under way or will be sent.
        private final Object writing = new Object();
        private boolean halted;

        Beat(TokenManager m, IntentRecord intent) {
            long every = beatMillis(m);
            thread = new Thread(
                    () -> {
                        try {
                            while (!stopped.await(every, TimeUnit.MILLISECONDS)) beatOnce(m, intent, this);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "tenant-integration-intent-beat");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        /**
         * Stops the beats without waiting for a beat's read under way (its storage command may hang for
         * the storage's whole command timeout: a Redis node that stopped answering); that beat writes
         * nothing once its read answers. A beat's write under way is waited for.
         */
        void stop() {
            stopped.countDown();
            synchronized (writing) {
                halted = true;
            }
        }

        /** Sends a beat's write unless the beats are stopped; whether it was sent. */
        boolean write(Runnable send) {
            synchronized (writing) {
                if (halted) return false;
                send.run();
                return true;
            }
        }
    }

    /**
     * One beat (D7): rewrites the stored intent with a new {@code since} ({@code max(now, stored since +
     * 1)}, every other field unchanged) only while it is still {@code intent}'s holder's: read, compare
     * the holder, write, as {@link #drop} does. Another holder's intent is never overwritten; a beat
     * that fails or finds another holder is no error (the next one tries again). The write goes
     * through {@code beat}: none once the beats are stopped.
     */
    static void beatOnce(TokenManager m, IntentRecord intent, Beat beat) {
        try {
            Optional<IntentRecord> current = m.storage.get(m.intentKey).flatMap(IntentRecord::parse);
            if (current.isEmpty() || !current.get().holder().equals(intent.holder())) {
                m.log(
                        System.Logger.Level.DEBUG,
                        "the stored refresh intent is no longer this process's; it is not beaten");
                return;
            }
            long since = Math.max(Math.round(m.nowMs()), current.get().since() + 1);
            String record = new IntentRecord(intent.fingerprint(), intent.holder(), since, intent.pid(), intent.host())
                    .serialize();
            if (!beat.write(() -> m.storage.set(m.intentKey, record))) {
                m.log(
                        System.Logger.Level.DEBUG,
                        "the refresh intent was dropped while its beat read it; it is not beaten");
            }
        } catch (RuntimeException e) {
            m.log(System.Logger.Level.DEBUG, "the beat of the refresh intent failed; the next beat tries again");
        }
    }

    /** The refresh lock was taken over before the refresh left: nothing was sent. */
    static final class LockLost extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LockLost() {
            super("the refresh lock was taken over before the refresh left", null, false, false);
        }
    }
}
