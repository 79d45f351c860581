package io.github.tenantintegration.conformance;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.postgresstorage.PostgresStorage;
import io.github.tenantintegration.redisstorage.RedisStorage;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * {@code --warm}: touches what an actor loads (a manager, its HTTP client, the file, Redis and PostgreSQL storages,
 * the sessions, against nothing that answers), so that the build's run with {@code -XX:ArchiveClassesAtExit} records
 * those classes in the actor's class-data archive.
 */
final class Warm {
    private Warm() {}

    static void run() {
        TokenManager manager = TokenManager.builder("http://127.0.0.1:9", "warm", "http://127.0.0.1:53682/callback")
                .scopes(Scope.PROFILE_READ)
                .requestTimeout(Duration.ofSeconds(2))
                .build();
        manager.isSignedIn();
        try {
            manager.completeAuthorization("http://127.0.0.1:53682/callback?code=warm&state="
                    + manager.beginAuthorization().url().getRawQuery().length());
        } catch (TokenManagerException e) {
            // Expected: nothing answers.
        }
        Sessions sessions = Sessions.builder(
                        TokenManager.builder("http://127.0.0.1:9", "warm", "http://127.0.0.1:53682/callback")
                                .scopes(Scope.PROFILE_READ))
                .build();
        sessions.isSignedIn("warm");
        sessions.beginSignIn("warm", null);
        try {
            Path dir = Files.createTempDirectory("tenant-integration-warm");
            FileStorage.of(dir.resolve("tokens.json")).set("k", "v");
            FileStorage.of(dir.resolve("tokens.json")).lock().withLock("warm", held -> held.isHeld());
        } catch (java.io.IOException | RuntimeException e) {
            // Only classes matter here.
        }
        RedisClient client = RedisClient.create("redis://127.0.0.1:9");
        client.setOptions(RedisStorage.clientOptions());
        try {
            RedisStorage.builder(client).build();
        } catch (RuntimeException e) {
            // Expected: nothing listens.
        }
        RedisClusterClient.create("redis://127.0.0.1:9").setOptions(RedisStorage.clusterClientOptions());
        try {
            org.postgresql.ds.PGSimpleDataSource source = new org.postgresql.ds.PGSimpleDataSource();
            source.setUrl("jdbc:postgresql://127.0.0.1:9/warm");
            source.setConnectTimeout(1);
            PostgresStorage.builder(source, "http://127.0.0.1:9", "warm")
                    .commandTimeout(Duration.ofSeconds(2))
                    .build()
                    .get("tenant-integration:http://127.0.0.1:9:warm:tokens");
        } catch (RuntimeException e) {
            // Expected: nothing listens.
        }
    }
}
