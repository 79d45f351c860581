package io.github.tenantintegration.redisstorage;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.concurrent.CompletableFuture;

/**
 * The storage's connection: one command connection of a {@link RedisClient} (one server, or Sentinel) or
 * of a {@link RedisClusterClient}, the same commands on both, and the connections for the pieces that
 * differ: a pub/sub connection for a waiter, the connection of a key's primary for {@code WAIT}.
 */
final class Connection {
    private final RedisClient client;
    private final RedisClusterClient cluster;
    private final StatefulConnection<String, String> connection;
    final RedisClusterAsyncCommands<String, String> async;

    private Connection(
            RedisClient client,
            RedisClusterClient cluster,
            StatefulConnection<String, String> connection,
            RedisClusterAsyncCommands<String, String> async) {
        this.client = client;
        this.cluster = cluster;
        this.connection = connection;
        this.async = async;
    }

    static Connection of(RedisClient client) {
        StatefulRedisConnection<String, String> connection = client.connect(StringCodec.UTF8);
        return new Connection(client, null, connection, connection.async());
    }

    static Connection of(RedisClusterClient cluster) {
        StatefulRedisClusterConnection<String, String> connection = cluster.connect(StringCodec.UTF8);
        return new Connection(null, cluster, connection, connection.async());
    }

    boolean isCluster() {
        return cluster != null;
    }

    /** A new pub/sub connection (a subscribed connection takes no other command). */
    CompletableFuture<StatefulRedisPubSubConnection<String, String>> openPubSub() {
        if (cluster != null) return cluster.connectPubSubAsync(StringCodec.UTF8).thenApply(c -> c);
        return CompletableFuture.supplyAsync(() -> client.connectPubSub(StringCodec.UTF8), RedisStorage.WORKERS);
    }

    /**
     * The commands of the connection that writes {@code key}: on a cluster the key's primary (so that
     * {@code WAIT} counts the acknowledgements of that connection's writes), else the one connection.
     */
    RedisClusterAsyncCommands<String, String> writerOf(String key) {
        if (cluster == null) return async;
        StatefulRedisClusterConnection<String, String> clustered =
                (StatefulRedisClusterConnection<String, String>) connection;
        RedisClusterNode primary = clustered.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
        if (primary == null) return async;
        return clustered.getConnection(primary.getNodeId()).async();
    }

    void close() {
        connection.closeAsync();
    }
}
