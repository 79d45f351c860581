package io.github.tenantintegration.redisstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A waiter's subscription to a lock's releases ({@code spec/token-store/README.md}, "Redis: waking
 * waiters"), open for one wait, on a pub/sub connection of its own (a subscribed connection takes no
 * other command). A message only shortens a wait: without a subscription the waiter polls.
 */
final class Subscription {
    private final StatefulRedisPubSubConnection<String, String> connection;
    private final Semaphore released = new Semaphore(0);

    private Subscription(StatefulRedisPubSubConnection<String, String> connection) {
        this.connection = connection;
    }

    /**
     * Subscribes to {@code channel} and returns once the subscription is confirmed (so that a try made after
     * it cannot miss a release); null when none can be had within {@code timeout} (an ACL without
     * SUBSCRIBE, a connection that fails).
     */
    static Subscription open(RedisStorage storage, String channel, Duration timeout) {
        CompletableFuture<StatefulRedisPubSubConnection<String, String>> opening = storage.connection.openPubSub();
        StatefulRedisPubSubConnection<String, String> connection;
        try {
            connection = opening.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            opening.thenAccept(StatefulRedisPubSubConnection::closeAsync);
            return null;
        }
        Subscription subscription = new Subscription(connection);
        connection.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String from, String message) {
                if (channel.equals(from)) subscription.released.release();
            }
        });
        try {
            connection.async().subscribe(channel).toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return subscription;
        } catch (Exception e) {
            if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            subscription.close();
            return null;
        }
    }

    /** Waits for a release announced (since the last call) or {@code pauseNanos}; a null subscription only pauses. */
    static void next(Subscription subscription, long pauseNanos) {
        try {
            if (subscription == null) {
                TimeUnit.NANOSECONDS.sleep(pauseNanos);
                return;
            }
            if (subscription.released.tryAcquire(pauseNanos, TimeUnit.NANOSECONDS))
                subscription.released.drainPermits();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the Redis lock");
        }
    }

    /** Unsubscribes by closing the connection. */
    void close() {
        connection.closeAsync();
    }
}
