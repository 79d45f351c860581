package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.RefreshTokenGrantRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The refresh protocol of {@code spec/token-store/README.md} ("Paused processes"), step by step:
 *
 * <ol start="0">
 *   <li>read the token record without the lock: fresh, it is used ({@link #readFirst});
 *   <li>take the refresh lock (its wait ends once fresh tokens appear) and read the record
 *       ({@link #underLock}, {@link #obtain});
 *   <li>a live intent of another process naming the same refresh token is waited for outside the
 *       lock ({@link Intents});
 *   <li>check the lock is still held; 4. write the intent; 5. the last checks right before the
 *       request leaves ({@link Intents#stillOurs});
 *   <li value="6">send, retrying only a request that never left or was answered 429 or 503
 *       ({@link #refresh});
 *   <li>write the tokens; not written: keep them in memory and the intent, and write them again a
 *       second later ({@link #commitOrReport}).
 * </ol>
 */
final class Refresh {
    /** Times the lock is taken again after it was found taken over before a refresh left. */
    static final int LOCK_TRIES = 3;

    /** The longest wait before a refresh is sent again; a longer Retry-After is not waited for. */
    static final Duration MAX_RETRY_DELAY = Duration.ofSeconds(10);

    private Refresh() {}

    /** The token in memory when it is fresh and written (or its write is not due again): no lock, no I/O. */
    static String fastToken(TokenManager m) {
        TokenRecord current = m.current;
        if (current == null || !m.fresh(current)) return null;
        TokenRecord unsaved = m.unsaved;
        if (unsaved == null || (current == unsaved && m.nowMs() < m.retryWriteAfter)) return current.accessToken;
        return null;
    }

    /** The one refresh in flight, started on the executor when there is none. */
    static CompletableFuture<String> flight(TokenManager m) {
        m.mu.lock();
        try {
            if (m.flight != null) return m.flight;
            CompletableFuture<String> flight = new CompletableFuture<>();
            m.flight = flight;
            try {
                m.executor.execute(() -> fly(m, flight));
            } catch (RuntimeException e) {
                m.flight = null;
                flight.completeExceptionally(new TokenManagerException(
                        ErrorCode.STORAGE_FAILED, "the manager's executor refused the refresh", e));
            }
            return flight;
        } finally {
            m.mu.unlock();
        }
    }

    private static void fly(TokenManager m, CompletableFuture<String> flight) {
        String token = null;
        Throwable error = null;
        try {
            token = flyOnce(m);
        } catch (Throwable e) {
            error = e;
        }
        m.mu.lock();
        try {
            if (m.flight == flight) m.flight = null;
        } finally {
            m.mu.unlock();
        }
        if (error != null) flight.completeExceptionally(error);
        else flight.complete(token);
    }

    static String flyOnce(TokenManager m) {
        TokenRecord held = heldUnsaved(m);
        TokenRecord stored = readFirst(m);
        if (stored != null) return stored.accessToken;
        m.log(System.Logger.Level.DEBUG, "waiting for the refresh lock");
        try {
            return underLock(m);
        } catch (TokenManagerException e) {
            if (held == null) throw e;
            return serveUnsaved(m, e, held);
        }
    }

    /** Tokens of ours whose write failed, still fresh and in use; else null. */
    static TokenRecord heldUnsaved(TokenManager m) {
        TokenRecord unsaved = m.unsaved;
        if (unsaved != null && m.current == unsaved && m.fresh(unsaved)) return unsaved;
        return null;
    }

    /**
     * Tokens whose write failed and that are still fresh, when retrying the write cannot even run: the
     * tenant holds them as current, so they stay in use.
     */
    private static String serveUnsaved(TokenManager m, TokenManagerException error, TokenRecord held) {
        if (m.current != held || m.unsaved != held || !m.fresh(held)) throw error;
        TokenManagerException failure = Session.storageFailed(m, error);
        m.retryWriteAfter = m.nowMs() + TokenManager.UNSAVED_RETRY_MS;
        m.log(
                System.Logger.Level.WARNING,
                "the tokens could not be written again (storage or lock unavailable); they stay in use");
        m.emit(new Event(Event.Kind.STORAGE_FAILED, null, false, failure));
        retryWriteLater(m);
        return held.accessToken;
    }

    /**
     * Step 0: where processes share the storage, fresh tokens another process stored are read
     * without the lock (null when the lock must be taken).
     */
    static TokenRecord readFirst(TokenManager m) {
        if (!m.intents || m.unsaved != null) return null;
        TokenRecord stored = freshInStorage(m);
        if (stored != null) m.log(System.Logger.Level.DEBUG, "fresh tokens in storage; no lock needed");
        return stored;
    }

    /**
     * The stored record when it is usable as it is (fresh, not refused, no unsaved record of ours, no
     * sign-in or sign-out meanwhile), made current; else null. A read error is null: the lock is
     * taken and reports it.
     */
    static TokenRecord freshInStorage(TokenManager m) {
        int before;
        m.mu.lock();
        try {
            before = m.generation;
        } finally {
            m.mu.unlock();
        }
        Optional<String> raw;
        try {
            raw = m.storage.get(m.tokensKey);
        } catch (RuntimeException e) {
            return null;
        }
        TokenRecord stored = raw.flatMap(TokenRecord::parse).orElse(null);
        m.mu.lock();
        try {
            if (stored == null
                    || before != m.generation
                    || m.unsaved != null
                    || !m.fresh(stored)
                    || stored.accessToken.equals(m.rejected)) return null;
            Session.setCurrent(m, stored);
            return stored;
        } finally {
            m.mu.unlock();
        }
    }

    /**
     * Runs {@link #obtain} under the refresh lock: taken again when it was found lost before a refresh
     * left, and let go while another process's refresh intent is honoured.
     */
    static String underLock(TokenManager m) {
        int tries = 0;
        while (true) {
            TokenRecord[] found = new TokenRecord[1];
            try {
                Lock.Task<String> task = held -> obtain(m, held, false);
                if (m.lock instanceof WaitingLock waiting && m.intents) {
                    // Each wake of the wait re-reads the storage; it ends once another process stored fresh tokens.
                    return waiting.withLockUntil(m.lockName, () -> (found[0] = freshInStorage(m)) != null, task);
                }
                return m.lock.withLock(m.lockName, task);
            } catch (LockWaitEndedException e) {
                if (found[0] == null)
                    throw new TokenManagerException(ErrorCode.STORAGE_FAILED, "the lock's wait ended without tokens");
                m.log(System.Logger.Level.DEBUG, "fresh tokens stored by another process while waiting for the lock");
                return found[0].accessToken;
            } catch (Intents.LockLost e) {
                tries++;
                m.log(
                        System.Logger.Level.WARNING,
                        "the refresh lock was taken over while this process held it (paused?); nothing was sent; taking the lock again");
                if (tries >= LOCK_TRIES) throw new TransientException(0, 0, false, null, null);
            } catch (Intents.Pending pending) {
                m.log(
                        System.Logger.Level.DEBUG,
                        "waiting for the refresh with the same refresh token to be stored",
                        "holder",
                        pending.intent.describe());
                Intents.await(m, pending);
            } catch (StorageException e) {
                // The lock's own failure (the task reports the storage's as STORAGE_FAILED already). A
                // storage that could not be locked ends the watch of another refresh's intent (D1).
                Intents.endWatch(m);
                throw e.code() == ErrorCode.LOCK_TIMEOUT ? e : Session.storageFailed(m, e);
            } catch (TokenManagerException e) {
                if (Intents.isStorageFailure(e)) Intents.endWatch(m);
                throw e;
            } catch (RuntimeException e) {
                Intents.endWatch(m);
                throw Session.storageFailed(m, e);
            }
        }
    }

    /**
     * Steps 1 and 2, under the lock: re-reads the storage, and refreshes only if what it finds is not
     * usable and no other process's live refresh intent names its refresh token.
     */
    static String obtain(TokenManager m, Held held, boolean again) {
        m.log(System.Logger.Level.DEBUG, "refresh lock taken; reading the tokens from storage");
        TokenRecord unsaved = m.unsaved;
        TokenRecord stored;
        if (unsaved != null) {
            stored = writeUnsavedAgain(m, unsaved);
        } else {
            stored = Session.load(m);
        }
        if (stored == null)
            throw new TokenManagerException(ErrorCode.NOT_SIGNED_IN, "there are no tokens; sign in first");
        String rejected;
        m.mu.lock();
        try {
            rejected = m.rejected;
        } finally {
            m.mu.unlock();
        }
        if (!m.fresh(stored) || stored.accessToken.equals(rejected)) {
            if (m.intents && stored != m.unsaved) {
                Optional<IntentRecord> intent = Intents.read(m);
                if (intent.isPresent() && Intents.mustWaitFor(m, intent.get(), stored)) {
                    throw new Intents.Pending(intent.get(), stored.id);
                }
            }
            return refresh(m, held, stored, again);
        }
        m.mu.lock();
        try {
            Session.setCurrent(m, stored);
        } finally {
            m.mu.unlock();
        }
        return stored.accessToken;
    }

    /**
     * Step 7's later write: ours unless the stored record supersedes it; written again (or reported),
     * and our intent dropped once written.
     */
    private static TokenRecord writeUnsavedAgain(TokenManager m, TokenRecord unsaved) {
        TokenRecord loaded;
        try {
            loaded = Session.load(m);
        } catch (TokenManagerException e) {
            loaded = null;
        }
        TokenRecord stored;
        if (loaded != null && TokenRecord.supersedes(loaded, unsaved)) {
            m.mu.lock();
            try {
                if (m.unsaved == unsaved) m.unsaved = null;
            } finally {
                m.mu.unlock();
            }
            stored = loaded;
        } else {
            commitOrReport(m, unsaved);
            stored = unsaved;
            refuseUnwritten(m, unsaved);
        }
        IntentRecord own;
        boolean written;
        m.mu.lock();
        try {
            written = m.unsaved == null;
            own = m.ownIntent;
        } finally {
            m.mu.unlock();
        }
        if (written) Intents.drop(m, own);
        return stored;
    }

    /**
     * Never refresh from tokens that are not stored: once tokens whose write failed need a refresh and
     * their write failed again, {@code STORAGE_FAILED} at once, nothing sent.
     */
    private static void refuseUnwritten(TokenManager m, TokenRecord unsaved) {
        boolean still;
        String rejected;
        TokenManagerException failure;
        m.mu.lock();
        try {
            still = m.unsaved == unsaved;
            rejected = m.rejected;
            failure = m.writeFailure;
        } finally {
            m.mu.unlock();
        }
        if (still && (!m.fresh(unsaved) || unsaved.accessToken.equals(rejected))) {
            throw new TokenManagerException(
                    ErrorCode.STORAGE_FAILED,
                    "the refreshed tokens cannot be written, so they are not refreshed again until they are",
                    failure == null ? null : failure.getCause());
        }
    }

    /** Steps 3 to 7: the intent, the last checks, the request (with its retries) and the write. */
    static String refresh(TokenManager m, Held held, TokenRecord stored, boolean again) {
        int generation;
        m.mu.lock();
        try {
            generation = m.generation;
        } finally {
            m.mu.unlock();
        }
        IntentRecord intent = Intents.write(m, held, stored);
        m.log(System.Logger.Level.DEBUG, "refresh started");
        String body = new RefreshTokenGrantRequest(stored.refreshToken, m.clientId, null).toJson();
        List<String> secrets = List.of(stored.accessToken, stored.refreshToken);
        TokenRecord record;
        for (int attempt = 1; ; attempt++) {
            if (m.intents && !Intents.stillOurs(m, held, stored, intent)) return obtain(m, held, again);
            try {
                record = TokenHttp.requestTokens(m, body, secrets, stored, attempt);
                break;
            } catch (TransientException e) {
                Duration delay = retryWait(m, e, attempt);
                if (delay == null) {
                    Intents.drop(m, intent);
                    throw e;
                }
                sleep(m, delay, intent);
            } catch (OAuthException e) {
                Intents.drop(m, intent);
                if (!"invalid_grant".equals(e.error())) throw e;
                return afterInvalidGrant(m, held, e, stored, again, generation);
            } catch (RuntimeException e) {
                Intents.drop(m, intent);
                throw e;
            }
        }
        boolean moved;
        m.mu.lock();
        try {
            moved = generation != m.generation;
        } finally {
            m.mu.unlock();
        }
        if (moved) {
            Intents.drop(m, intent);
            throw new TokenManagerException(
                    ErrorCode.NOT_SIGNED_IN, "signed in or out while the refresh ran; its tokens are dropped");
        }
        SessionInfo info = commitOrReport(m, record);
        if (info != null) {
            // Stored: the intent has done its job. Kept while the write fails, so that the others do not
            // present the old token while this process writes the new one again.
            Intents.drop(m, intent);
            m.log(System.Logger.Level.DEBUG, "refresh finished", "expires_at", info.expiresAt());
            m.emit(new Event(Event.Kind.TOKENS_REFRESHED, info, false, null));
        } else {
            m.log(
                    System.Logger.Level.WARNING,
                    "refresh finished, but the tokens could not be stored; the write is retried later");
        }
        return record.accessToken;
    }

    private static void sleep(TokenManager m, Duration delay, IntentRecord intent) {
        try {
            TimeUnit.NANOSECONDS.sleep(delay.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Intents.drop(m, intent);
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting to retry the refresh");
        }
    }

    private static String afterInvalidGrant(
            TokenManager m, Held held, OAuthException refused, TokenRecord stored, boolean again, int generation) {
        // Another process may have rotated the token meanwhile: try the newest one once before giving up.
        if (!again) {
            TokenRecord latest = null;
            try {
                latest = Session.load(m);
            } catch (TokenManagerException e) {
                if (e.code() != ErrorCode.NOT_SIGNED_IN) throw e;
            }
            if (latest != null && !latest.refreshToken.equals(stored.refreshToken)) return obtain(m, held, true);
        }
        SessionEndedException ended = new SessionEndedException(refused);
        boolean same;
        m.mu.lock();
        try {
            same = generation == m.generation;
        } finally {
            m.mu.unlock();
        }
        if (same) {
            m.log(System.Logger.Level.WARNING, "session ended (invalid_grant)");
            try {
                Session.clear(m);
            } catch (TokenManagerException e) {
                m.log(
                        System.Logger.Level.WARNING,
                        "the ended session's tokens could not be deleted",
                        "why",
                        e.getMessage());
            }
            m.emit(new Event(Event.Kind.SESSION_ENDED, null, false, ended));
        }
        throw ended;
    }

    /** How long to wait before sending again, or null when the failure must not be retried. */
    static Duration retryWait(TokenManager m, TransientException failure, int attempt) {
        if (failure.sent() || attempt >= m.attempts) return null;
        String why = failure.status() == 0 ? "no connection" : "HTTP " + failure.status();
        Duration delay = m.retryDelay.multipliedBy(1L << Math.min(attempt - 1, 20));
        if (!failure.retryAfter().isZero()) {
            if (failure.retryAfter().compareTo(MAX_RETRY_DELAY) > 0) {
                m.log(
                        System.Logger.Level.WARNING,
                        "refresh attempt failed; Retry-After too long, not retried",
                        "attempt",
                        attempt,
                        "why",
                        why,
                        "retry_after_ms",
                        failure.retryAfter().toMillis());
                return null;
            }
            delay = failure.retryAfter();
        }
        if (delay.compareTo(MAX_RETRY_DELAY) > 0) delay = MAX_RETRY_DELAY;
        m.log(
                System.Logger.Level.WARNING,
                "refresh attempt failed; retrying",
                "attempt",
                attempt,
                "why",
                why,
                "delay_ms",
                delay.toMillis());
        return delay;
    }

    /**
     * Commits the tokens, or when the write fails, reports it ({@code storage-failed}) and writes them
     * again later; the session's info, or null when not written.
     */
    static SessionInfo commitOrReport(TokenManager m, TokenRecord record) {
        try {
            return Session.commit(m, record);
        } catch (TokenManagerException e) {
            m.mu.lock();
            try {
                m.writeFailure = e;
                m.retryWriteAfter = m.nowMs() + TokenManager.UNSAVED_RETRY_MS;
            } finally {
                m.mu.unlock();
            }
            m.emit(new Event(Event.Kind.STORAGE_FAILED, null, false, e));
            retryWriteLater(m);
            return null;
        }
    }

    /**
     * After a failed write of fresh tokens on a shared storage, tries it again in a second even if no
     * call comes, and again each second while they stay unsaved (fresh, and still this process's own):
     * a retry that joined a call begun before it (whose lock release an outage held up) wrote nothing,
     * and the others wait for exactly this write (they give the intent up only after watching it for
     * the intent wait with the storage answering, D1). One retry scheduled at a time. As the Go kit's
     * {@code retryWriteLater} and the TypeScript kit's.
     */
    static void retryWriteLater(TokenManager m) {
        if (!m.intents) return;
        m.mu.lock();
        try {
            if (m.rewriting || m.closed) return;
            m.rewriting = true;
        } finally {
            m.mu.unlock();
        }
        CompletableFuture.delayedExecutor(TokenManager.UNSAVED_RETRY_MS + 10, TimeUnit.MILLISECONDS, m.executor)
                .execute(() -> retryWrite(m));
    }

    /**
     * One retry of {@link #retryWriteLater}: a call that writes the unsaved tokens, then the next retry
     * while they are still unsaved. A call it joined that tried no write in the last second (one begun
     * before it, whose lock release an outage held up) is followed by its own call at once: the others'
     * watch of this process's intent counts from the storage's first answer.
     */
    static void retryWrite(TokenManager m) {
        m.mu.lock();
        try {
            m.rewriting = false;
            if (m.closed) return;
        } finally {
            m.mu.unlock();
        }
        for (int call = 0; call < 2; call++) {
            TokenRecord held = heldUnsaved(m);
            if (held == null) return;
            try {
                m.accessToken();
            } catch (RuntimeException e) {
                m.log(
                        System.Logger.Level.WARNING,
                        "writing the held tokens again failed",
                        "why",
                        e instanceof TokenManagerException own
                                ? own.code()
                                : e.getClass().getSimpleName());
            }
            boolean still;
            boolean tried;
            m.mu.lock();
            try {
                still = m.unsaved == held && m.current == held;
                tried = m.nowMs() < m.retryWriteAfter; // a write failed within the last second
            } finally {
                m.mu.unlock();
            }
            if (!still) return;
            if (tried) break;
        }
        retryWriteLater(m);
    }
}
