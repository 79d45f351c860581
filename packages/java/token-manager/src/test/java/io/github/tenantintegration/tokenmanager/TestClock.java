package io.github.tenantintegration.tokenmanager;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** The system clock plus an offset a test moves. */
final class TestClock extends Clock {
    private volatile long offsetNanos;

    void advance(Duration by) {
        offsetNanos += by.toNanos();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return Instant.now().plusNanos(offsetNanos);
    }
}
