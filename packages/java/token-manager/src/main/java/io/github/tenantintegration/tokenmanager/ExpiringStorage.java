package io.github.tenantintegration.tokenmanager;

import java.time.Duration;

/**
 * A storage that can keep a value for a lifetime only, dropping it once the lifetime has passed
 * without a scan of every key ({@code spec/token-store/README.md}, "What a storage offers"): the
 * pending sign-ins are written so. Without it, a sign-in begun and never completed stays in the
 * storage until removed (its {@code expiresAt} still refuses it). The kit's storages all are.
 */
public interface ExpiringStorage extends Storage {
    /** Stores {@code value} under {@code key} for {@code lifetime}; durable when it returns. */
    void setExpiring(String key, String value, Duration lifetime);
}
