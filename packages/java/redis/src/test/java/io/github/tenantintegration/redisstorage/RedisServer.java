package io.github.tenantintegration.redisstorage;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A redis-server of a test's own on a free loopback port (Debian's, or REDIS_SERVER_PATH), stopped by
 * its pid. Outside CI a machine without redis-server skips the test, saying so; in CI it fails.
 */
final class RedisServer implements AutoCloseable {
    final int port;
    private final Process process;

    private RedisServer(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    static String command() {
        String fromEnv = System.getenv("REDIS_SERVER_PATH");
        if (fromEnv != null && !fromEnv.isBlank()) return fromEnv;
        for (String dir : List.of("/usr/bin", "/usr/local/bin", "/usr/sbin")) {
            if (Files.isExecutable(Path.of(dir, "redis-server")))
                return Path.of(dir, "redis-server").toString();
        }
        return null;
    }

    static RedisServer start() throws Exception {
        String command = command();
        if (!"true".equals(System.getenv("CI")))
            assumeTrue(command != null, "redis-server is not installed (apt-get install -y redis-server)");
        if (command == null) throw new IllegalStateException("in CI redis-server must be installed");
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Process process = new ProcessBuilder(
                        command,
                        "--port",
                        Integer.toString(port),
                        "--bind",
                        "127.0.0.1",
                        "--save",
                        "",
                        "--appendonly",
                        "no")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            try (Socket probe = new Socket("127.0.0.1", port)) {
                return new RedisServer(port, process);
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        process.destroyForcibly();
        throw new IllegalStateException("redis-server did not listen on port " + port);
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** A client with the options the storage asks for. */
    RedisClient client() {
        RedisClient client = RedisClient.create(RedisStorage.clientResources(), url());
        client.setOptions(RedisStorage.clientOptions());
        return client;
    }

    void signal(String name) throws Exception {
        new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                .start()
                .waitFor();
    }

    @Override
    public void close() {
        try {
            signal("CONT");
        } catch (Exception ignored) {
            // Killed below anyway.
        }
        process.destroyForcibly();
    }
}
