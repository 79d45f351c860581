package io.github.tenantintegration.postgresstorage;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A throwaway PostgreSQL server of a test's own (as the TypeScript kit's {@code tools/postgres} and the
 * Python kit's {@code postgres_server.py}): a fresh cluster ({@code initdb}) in a temporary directory,
 * started on a free loopback port, killed, stopped (SIGSTOP) and restarted by its pids. Debian's
 * PostgreSQL ({@code /usr/lib/postgresql/<version>/bin}) unless {@code POSTGRES_BIN_DIR} names another.
 * {@code initdb} and {@code postgres} refuse to run as root: a root process runs them as the {@code
 * postgres} user through {@code setpriv}, which execs, so the pid is the postmaster's own. Outside CI a
 * machine without PostgreSQL skips the test, saying so; in CI it fails.
 */
final class PostgresServer implements AutoCloseable {
    final int port;
    private final Path bin;
    private final Path dir;
    private final boolean root;
    private Process process;
    private final List<Long> stopped = new ArrayList<>();

    private PostgresServer(Path bin, Path dir, int port, boolean root) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
        this.root = root;
    }

    /** The directory of {@code initdb} and {@code postgres}, or null. */
    static Path find() throws IOException {
        String fromEnv = System.getenv("POSTGRES_BIN_DIR");
        if (fromEnv != null && !fromEnv.isBlank()) return Path.of(fromEnv);
        Path debian = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(debian)) return null;
        try (Stream<Path> versions = Files.list(debian)) {
            return versions.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .sorted(Comparator.comparingInt(
                                    (Path p) -> Integer.parseInt(p.getFileName().toString()))
                            .reversed())
                    .map(p -> p.resolve("bin"))
                    .filter(p -> Files.isExecutable(p.resolve("postgres")) && Files.isExecutable(p.resolve("initdb")))
                    .findFirst()
                    .orElse(null);
        }
    }

    static PostgresServer start() throws Exception {
        Path bin = find();
        if (!"true".equals(System.getenv("CI")))
            assumeTrue(bin != null, "PostgreSQL is not installed (apt-get install -y postgresql)");
        if (bin == null) throw new IllegalStateException("in CI PostgreSQL must be installed");
        boolean root = "root".equals(System.getProperty("user.name"));
        PostgresServer server = new PostgresServer(bin, newDirectory(root), freePort(), root);
        server.run(
                "initdb",
                "-D",
                server.dir.resolve("data").toString(),
                "-A",
                "trust",
                "-U",
                "tenant",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync");
        server.up();
        return server;
    }

    /** A new temporary directory, owned by the {@code postgres} user when this process is root. */
    private static Path newDirectory(boolean root) throws IOException {
        Path dir = Files.createTempDirectory("tenant-postgres-");
        if (root) {
            UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
            Files.setOwner(dir, users.lookupPrincipalByName("postgres"));
        }
        return dir;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /**
     * A hot standby of this server ({@code pg_basebackup -R -X stream}, as {@code tools/postgres}'s
     * {@code standby()}) on a port of its own: it streams the primary's writes and refuses its own
     * (SQLSTATE 25006); {@code pg_is_in_recovery()} is true there. Closed by its own {@link #close}.
     */
    PostgresServer standby() throws Exception {
        PostgresServer standby = new PostgresServer(bin, newDirectory(root), freePort(), root);
        try {
            run(
                    "pg_basebackup",
                    "-D",
                    standby.dir.resolve("data").toString(),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    Integer.toString(port),
                    "-U",
                    "tenant",
                    "-R",
                    "-X",
                    "stream");
            standby.up();
            return standby;
        } catch (Exception e) {
            standby.close();
            throw e;
        }
    }

    private List<String> as(List<String> command) {
        if (!root) return command;
        List<String> all =
                new ArrayList<>(List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups", "--"));
        all.addAll(command);
        return all;
    }

    private void run(String program, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(bin.resolve(program).toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(as(command)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IllegalStateException(program + " failed: " + out);
    }

    /** Starts the server (again, on the same port) and waits until it accepts connections. */
    void up() throws Exception {
        List<String> command = List.of(
                bin.resolve("postgres").toString(),
                "-D",
                dir.resolve("data").toString(),
                "-p",
                Integer.toString(port),
                "-k",
                dir.toString(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "shared_buffers=16MB",
                "-c",
                "max_connections=100");
        process = new ProcessBuilder(as(command))
                .redirectErrorStream(true)
                .redirectOutput(
                        ProcessBuilder.Redirect.appendTo(dir.resolve("log").toFile()))
                .start();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try (Connection c = DriverManager.getConnection(jdbcUrl(), "tenant", "")) {
                return;
            } catch (SQLException e) {
                if (!process.isAlive() || System.nanoTime() > deadline)
                    throw new IllegalStateException("postgres did not start: " + Files.readString(dir.resolve("log")));
                Thread.sleep(50);
            }
        }
    }

    String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /** A DataSource of the driver's (a connection per checkout), with more connection properties ({@code name=value&…}). */
    PGSimpleDataSource dataSource(String properties) throws SQLException {
        PGSimpleDataSource source = new PGSimpleDataSource();
        source.setUrl(jdbcUrl() + "?user=tenant&ApplicationName=java-test&connectTimeout=5"
                + (properties.isEmpty() ? "" : "&" + properties));
        return source;
    }

    PGSimpleDataSource dataSource() throws SQLException {
        return dataSource("");
    }

    /** Runs SQL as the superuser, autocommit. */
    void sql(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl(), "tenant", "");
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private List<Long> children() {
        List<Long> found = new ArrayList<>();
        process.toHandle().descendants().forEach(h -> found.add(h.pid()));
        return found;
    }

    private void signal(String name, List<Long> pids) throws Exception {
        if (pids.isEmpty()) return;
        List<String> command = new ArrayList<>(List.of("kill", "-" + name));
        for (long pid : pids) command.add(Long.toString(pid));
        new ProcessBuilder(command).start().waitFor();
    }

    /** Stops (SIGSTOP) the postmaster and its backends: connections stay open, nothing answers. */
    void hang() throws Exception {
        signal("STOP", List.of(process.pid()));
        stopped.clear();
        stopped.add(process.pid());
        stopped.addAll(children());
        signal("STOP", stopped);
    }

    void resume() throws Exception {
        signal("CONT", stopped);
        stopped.clear();
    }

    /** Kills the postmaster and every backend at once (SIGKILL: no shutdown). */
    void kill() throws Exception {
        if (process == null || !process.isAlive()) return;
        List<Long> pids = new ArrayList<>(List.of(process.pid()));
        pids.addAll(children());
        signal("KILL", pids);
        process.waitFor();
        for (long pid : pids) {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline)
                Thread.sleep(20);
        }
        stopped.clear();
        Files.deleteIfExists(dir.resolve("data").resolve("postmaster.pid"));
    }

    @Override
    public void close() throws Exception {
        kill();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
