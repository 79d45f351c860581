package io.github.tenantintegration.tokenmanager;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Pending sign-ins by state ({@code spec/token-store/README.md}, "Pending sign-ins by state"; Go's
 * {@code pending.go}): each sign-in begun is stored under a name of its own, found at the callback by
 * its state and taken once, so that any number may be in flight (two tabs, a double click, thousands
 * of users of one server). Written with a lifetime where the storage can ({@link ExpiringStorage}),
 * taken atomically where it can ({@link TakingStorage}); otherwise the documented fallback, with a
 * warning once.
 */
final class Pending {
    private final Storage storage;
    private final System.Logger logger;
    private final String prefix; // tenant-integration:<origin>:<clientId>:pending:
    private final AtomicBoolean warned = new AtomicBoolean();

    Pending(Storage storage, System.Logger logger, String origin, String clientId) {
        this.storage = storage;
        this.logger = logger;
        this.prefix = "tenant-integration:" + origin + ":" + clientId + ":pending:";
    }

    /**
     * The pending key of a state: the first 32 lowercase hex digits of the SHA-256 of its UTF-8 bytes.
     * The state itself never appears in a name, a key or a log.
     */
    static String key(String state) {
        try {
            byte[] sum = MessageDigest.getInstance("SHA-256").digest(state.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sum, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is in every JDK", e);
        }
    }

    /** The storage name of the pending sign-in of {@code state}. */
    String name(String state) {
        return prefix + key(state);
    }

    /** Stores {@code record} for {@code lifetime} where the storage can, else without one. */
    void put(PendingRecord record, Duration lifetime) {
        warnOnce();
        String name = name(record.state());
        if (storage instanceof ExpiringStorage expiring) expiring.setExpiring(name, record.serialize(), lifetime);
        else storage.set(name, record.serialize());
    }

    /**
     * Reads and deletes the pending sign-in of {@code state} in one step where the storage can, else
     * get then delete (not atomic). Empty when there is none or it does not validate (dropped, with a
     * warning naming the key).
     */
    Optional<PendingRecord> take(String state) {
        String name = name(state);
        Optional<String> raw;
        if (storage instanceof TakingStorage taking) raw = taking.take(name);
        else {
            raw = storage.get(name);
            if (raw.isPresent()) storage.delete(name);
        }
        if (raw.isEmpty()) return Optional.empty();
        Optional<PendingRecord> record = PendingRecord.parse(raw.get());
        if (record.isEmpty()) {
            logger.log(
                    System.Logger.Level.WARNING,
                    "the pending sign-in found for the callback's state is not a valid record; it is dropped key="
                            + storage.where(name));
        }
        return record;
    }

    /** Says, at the first sign-in, what the storage lacks of what pending sign-ins use. */
    private void warnOnce() {
        if (!warned.compareAndSet(false, true)) return;
        if (!(storage instanceof ExpiringStorage)) {
            logger.log(
                    System.Logger.Level.WARNING,
                    "the storage has no setExpiring: a sign-in begun and never completed stays in it until removed"
                            + " (its expiry still refuses it)");
        }
        if (!(storage instanceof TakingStorage)) {
            logger.log(
                    System.Logger.Level.WARNING,
                    "the storage has no take: a pending sign-in is read, then deleted, which is not atomic: two"
                            + " callbacks of one state arriving at once may both exchange the code (a storage several"
                            + " processes share needs take)");
        }
    }
}
