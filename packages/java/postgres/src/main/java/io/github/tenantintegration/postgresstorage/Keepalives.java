package io.github.tenantintegration.postgresstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.TokenManagerException;

/**
 * The server's TCP keepalives on the lock's connection while it holds the lock, in seconds ({@code
 * tcp_keepalives_idle}, {@code _interval}, {@code _count}, set for the lock's transaction only): a
 * holder whose machine vanished is found dead after about {@code idle + interval × count}, and its lock
 * released; a paused process's kernel still answers keepalives, so it keeps its lock.
 *
 * @param idle seconds without traffic before the first probe
 * @param interval seconds between probes
 * @param count probes unanswered before the server drops the connection
 */
public record Keepalives(int idle, int interval, int count) {
    /** 10, 5 and 3 s: a vanished holder is found dead in about 25 s (every kit's default). */
    public static final Keepalives DEFAULT = new Keepalives(10, 5, 3);

    /**
     * @throws TokenManagerException {@code INVALID_OPTIONS} unless every value is above 0
     */
    public Keepalives {
        if (idle <= 0 || interval <= 0 || count <= 0)
            throw new TokenManagerException(
                    ErrorCode.INVALID_OPTIONS, "keepalives: idle, interval and count must be > 0");
    }
}
