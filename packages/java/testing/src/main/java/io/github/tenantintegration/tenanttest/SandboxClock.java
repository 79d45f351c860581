package io.github.tenantintegration.tenanttest;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The sandbox's clock as seen from this process: the system clock plus the sandbox's offset, which
 * {@link Sandbox#advance} moves. Give it to every token manager under test ({@code .clock(sandbox.clock())}).
 */
public final class SandboxClock extends Clock {
    private volatile long offsetNanos;

    SandboxClock() {}

    void offset(Duration offset) {
        offsetNanos = offset.toNanos();
    }

    /** How far ahead of the system clock the sandbox's clock runs. */
    public Duration offset() {
        return Duration.ofNanos(offsetNanos);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /** This clock only knows UTC. */
    @Override
    public Clock withZone(ZoneId zone) {
        if (!ZoneOffset.UTC.equals(zone)) throw new UnsupportedOperationException("the sandbox's clock is in UTC");
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.now().plusNanos(offsetNanos);
    }

    @Override
    public long millis() {
        return System.currentTimeMillis() + offsetNanos / 1_000_000;
    }
}
