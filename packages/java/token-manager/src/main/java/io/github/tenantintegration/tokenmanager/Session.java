package io.github.tenantintegration.tokenmanager;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/** The stored session: read, written, cleared and revoked. */
final class Session {
    private Session() {}

    /**
     * The stored record, or null without one.
     *
     * @throws TokenManagerException {@code STORAGE_FAILED}; {@code NOT_SIGNED_IN} when the stored value is
     *     unreadable (reported once as a {@code storage-failed} event)
     */
    static TokenRecord load(TokenManager m) {
        Optional<String> raw;
        try {
            raw = m.storage.get(m.tokensKey);
        } catch (RuntimeException e) {
            throw loadFailed(m, e);
        }
        return parseStored(m, raw);
    }

    static TokenRecord parseStored(TokenManager m, Optional<String> raw) {
        if (raw.isEmpty()) return null;
        Optional<TokenRecord> record = TokenRecord.parse(raw.get());
        if (record.isPresent()) return record.get();
        String what =
                "the value under " + m.storage.where(m.tokensKey) + " is not a token record; signing in replaces it";
        reportUnreadable(m, what, null);
        throw new TokenManagerException(ErrorCode.NOT_SIGNED_IN, "the stored tokens are unreadable: " + what);
    }

    static TokenManagerException loadFailed(TokenManager m, RuntimeException e) {
        if (e instanceof StorageException storage && storage.reset()) {
            Throwable cause = Scrubbed.of(storage, m.known(List.of()));
            reportUnreadable(m, storage.reason(), cause);
            return new TokenManagerException(
                    ErrorCode.NOT_SIGNED_IN, "the stored tokens were unreadable: " + storage.reason(), cause);
        }
        return storageFailed(m, e);
    }

    static void reportUnreadable(TokenManager m, String what, Throwable cause) {
        m.log(System.Logger.Level.WARNING, "the stored tokens were unreadable", "why", what);
        m.emit(new Event(
                Event.Kind.STORAGE_FAILED,
                null,
                false,
                new TokenManagerException(
                        ErrorCode.STORAGE_FAILED, "the stored tokens were unreadable: " + what, cause)));
    }

    /** A storage's failure as the manager reports it: {@code STORAGE_FAILED} with it as the cause (a lock timeout as itself). */
    static TokenManagerException storageFailed(TokenManager m, RuntimeException e, String... secrets) {
        if (e instanceof TokenManagerException own
                && (own.code() == ErrorCode.LOCK_TIMEOUT
                        || own.code() == ErrorCode.STORAGE_FAILED
                        || own.code() == ErrorCode.ABORTED)) {
            return own;
        }
        Throwable cause = Scrubbed.of(e, m.known(List.of(secrets)));
        String why = cause instanceof TokenManagerException own ? own.getMessage() : String.valueOf(cause.getMessage());
        return new TokenManagerException(ErrorCode.STORAGE_FAILED, "the token storage failed: " + why, cause);
    }

    /**
     * Persists the tokens and makes them current. When the write fails they are current all the same
     * (kept as unsaved) and {@code STORAGE_FAILED} is thrown.
     */
    static SessionInfo commit(TokenManager m, TokenRecord record) {
        m.mu.lock();
        try {
            setCurrent(m, record);
            m.unsaved = record;
        } finally {
            m.mu.unlock();
        }
        try {
            m.storage.set(m.tokensKey, record.serialize());
        } catch (RuntimeException e) {
            throw storageFailed(m, e);
        }
        m.mu.lock();
        try {
            if (m.unsaved == record) m.unsaved = null;
        } finally {
            m.mu.unlock();
        }
        return m.info(record);
    }

    /** Makes {@code record} the tokens in use (with {@code mu} held). */
    static void setCurrent(TokenManager m, TokenRecord record) {
        m.current = record;
    }

    /** Forgets the session: in memory, and in the storage. */
    static void clear(TokenManager m) {
        m.mu.lock();
        try {
            m.generation++;
            m.current = null;
            m.unsaved = null;
        } finally {
            m.mu.unlock();
        }
        // Signed out: this process's intent is beaten no more (a waiter's watch gives it up).
        Intents.stopBeats(m);
        try {
            m.storage.delete(m.tokensKey);
        } catch (RuntimeException e) {
            throw storageFailed(m, e);
        }
    }

    static Optional<SessionInfo> info(TokenManager m) {
        TokenRecord unsaved = m.unsaved;
        if (unsaved != null) return Optional.of(m.info(unsaved));
        try {
            TokenRecord record = load(m);
            return record == null ? Optional.empty() : Optional.of(m.info(record));
        } catch (TokenManagerException e) {
            if (e.code() == ErrorCode.NOT_SIGNED_IN) return Optional.empty();
            throw e;
        }
    }

    static void revoke(TokenManager m) {
        String token;
        try {
            token = m.accessToken();
        } catch (TokenManagerException e) {
            if (e.code() == ErrorCode.NOT_SIGNED_IN || e.code() == ErrorCode.SESSION_ENDED) {
                m.signOut();
                return;
            }
            throw e;
        }
        String form = "token=" + encode(token) + "&token_type_hint=access_token&client_id=" + encode(m.clientId);
        TokenHttp.post(m, "/oauth/revoke", form, "application/x-www-form-urlencoded", List.of(token), 1);
        clear(m);
        m.log(System.Logger.Level.DEBUG, "revoked");
        m.emit(Event.of(Event.Kind.REVOKED));
        m.emit(new Event(Event.Kind.SIGNED_OUT, null, true, null));
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
