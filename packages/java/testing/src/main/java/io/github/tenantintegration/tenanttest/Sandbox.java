package io.github.tenantintegration.tenanttest;

import io.github.tenantintegration.internal.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The sandbox tenant ({@code tenant-sandbox}, the npm package {@code @tenant-integration/sandbox}) as a
 * child process on a free loopback port, with auto-approve (the authorize request is answered at once
 * with the redirect, no browser) and its test clock ({@link #advance} moves time forward). It rotates
 * refresh tokens and revokes the family on reuse, like the service is assumed to.
 *
 * <p>Which command starts it, first match wins: {@link Builder#command}; the environment variable
 * {@code TENANT_SANDBOX_COMMAND} (e.g. {@code node /path/to/sandbox/dist/cli.js}); {@code
 * node_modules/.bin/tenant-sandbox} in the working directory or one above it ({@code npm install
 * --save-dev @tenant-integration/sandbox}); {@code tenant-sandbox} on the {@code PATH}. Node.js 20 or
 * newer must be installed. Nothing here is for production: the sandbox approves every sign-in and its
 * clock can be moved.
 *
 * <pre>{@code
 * try (Sandbox sandbox = Sandbox.start()) {
 *     TokenManager manager = TokenManager.builder(sandbox.url(), Sandbox.DEFAULT_CLIENT_ID, Sandbox.DEFAULT_REDIRECT_URI)
 *             .scopes(Scope.PROFILE_READ).clock(sandbox.clock()).build();
 *     ...
 * }
 * }</pre>
 */
public final class Sandbox implements AutoCloseable {
    /** The environment variable holding the command that starts the sandbox (split on spaces). */
    public static final String COMMAND_ENV = "TENANT_SANDBOX_COMMAND";

    /** The OAuth client a sandbox registers when given none. */
    public static final String DEFAULT_CLIENT_ID = "test-integration";

    /** Its redirect URI; nothing needs to listen there: the sandbox's redirect is read, never followed. */
    public static final String DEFAULT_REDIRECT_URI = "http://127.0.0.1:53682/callback";

    private final String url;
    private final List<Client> clients;
    private final Process process;
    private final StringBuffer stderr;
    private final SandboxClock clock = new SandboxClock();
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    /**
     * An OAuth client the sandbox registers at start ({@code --client id=…,redirect=…}).
     *
     * @param id the {@code client_id}
     * @param redirectUris matched exactly; none may hold a comma or {@code |}
     * @param scopes the scopes it may ask for; empty for any scope of the contract
     */
    public record Client(String id, List<String> redirectUris, List<String> scopes) {
        /** Keeps unmodifiable copies. */
        public Client {
            Objects.requireNonNull(id, "id");
            redirectUris = List.copyOf(redirectUris);
            scopes = List.copyOf(scopes);
        }

        String spec() {
            String spec = "id=" + id + ",redirect=" + String.join("|", redirectUris);
            return scopes.isEmpty() ? spec : spec + ",scopes=" + String.join("|", scopes);
        }
    }

    private Sandbox(String url, List<Client> clients, Process process, StringBuffer stderr) {
        this.url = url;
        this.clients = clients;
        this.process = process;
        this.stderr = stderr;
    }

    /**
     * Starts a sandbox with the defaults ({@link #DEFAULT_CLIENT_ID}, any scope).
     *
     * @throws SandboxException {@code SANDBOX_FAILED} when no command is found, or the process exits or
     *     stays silent before it listens
     */
    public static Sandbox start() {
        return builder().start();
    }

    /** The options of a sandbox to start. */
    public static Builder builder() {
        return new Builder();
    }

    /** Its base URL, e.g. {@code http://127.0.0.1:41237}: the token manager's base URL. */
    public String url() {
        return url;
    }

    /** The URL of {@code path}, e.g. {@code sandbox.url("/api/v1/auth/user")}. */
    public URI url(String path) {
        return URI.create(url + path);
    }

    /** The OAuth clients it registered. */
    public List<Client> clients() {
        return clients;
    }

    /** Its process id. */
    public long pid() {
        return process.pid();
    }

    /** The sandbox's clock as seen from here: give it to every token manager under test. */
    public SandboxClock clock() {
        return clock;
    }

    /**
     * The command that starts the sandbox, without its options (see the class's documentation).
     *
     * @throws SandboxException {@code SANDBOX_FAILED} when none is found; the message says how to provide one
     */
    public static List<String> command() {
        String fromEnv = System.getenv(COMMAND_ENV);
        if (fromEnv != null && !fromEnv.isBlank())
            return Arrays.asList(fromEnv.trim().split("\\s+"));
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("node_modules/.bin/tenant-sandbox");
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return List.of(candidate.toString());
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                Path candidate = Path.of(dir, "tenant-sandbox");
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate))
                    return List.of(candidate.toString());
            }
        }
        throw new SandboxException(
                SandboxException.Code.SANDBOX_FAILED,
                "cannot find the sandbox: install it with `npm install "
                        + "--save-dev @tenant-integration/sandbox` (Node.js 20 or newer), or set " + COMMAND_ENV
                        + ", e.g. to 'npx --yes --package @tenant-integration/sandbox tenant-sandbox'",
                null);
    }

    private static Sandbox launch(Builder b) {
        List<String> argv = new ArrayList<>(b.command != null ? b.command : command());
        argv.addAll(List.of("--port", "0", "--auto-approve", "--test-clock", "--json"));
        argv.addAll(b.args);
        for (Client client : b.clients) argv.addAll(List.of("--client", client.spec()));
        Process process;
        try {
            process = new ProcessBuilder(argv)
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .start();
        } catch (IOException e) {
            throw new SandboxException(
                    SandboxException.Code.SANDBOX_FAILED, "cannot start the sandbox (" + argv.get(0) + ")", e);
        }
        StringBuffer stderr = new StringBuffer();
        drain(process.getErrorStream(), stderr);
        BufferedReader stdout =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                return stdout.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String line;
        try {
            line = first.get(b.startup.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            stop(process);
            throw failed("the sandbox printed nothing in " + b.startup.toMillis() + " ms" + tail(stderr), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop(process);
            throw failed("interrupted while the sandbox started", e);
        } catch (java.util.concurrent.ExecutionException e) {
            line = null;
        }
        if (line == null) {
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw failed(
                    "the sandbox exited (" + (process.isAlive() ? "running" : "status " + process.exitValue()) + ")"
                            + tail(stderr),
                    null);
        }
        drain(process.getInputStream(), null);
        Object url = Json.parseObject(line).map(m -> m.get("url")).orElse(null);
        if (!(url instanceof String text)) {
            stop(process);
            throw failed(
                    "the sandbox's first line is not its JSON start line: "
                            + line.substring(0, Math.min(200, line.length())),
                    null);
        }
        Sandbox sandbox = new Sandbox(text, List.copyOf(b.clients), process, stderr);
        try {
            sandbox.syncClock();
        } catch (SandboxException e) {
            sandbox.close();
            throw e;
        }
        return sandbox;
    }

    private static SandboxException failed(String message, Throwable cause) {
        return new SandboxException(SandboxException.Code.SANDBOX_FAILED, message, cause);
    }

    private static String tail(StringBuffer stderr) {
        String text = stderr.toString().trim();
        if (text.isEmpty()) return "";
        return ": " + (text.length() > 4096 ? text.substring(text.length() - 4096) : text);
    }

    /** Reads a stream to its end on a daemon thread, keeping its last 4 KiB in {@code into} (if any). */
    private static void drain(InputStream stream, StringBuffer into) {
        Thread reader = new Thread(
                () -> {
                    byte[] buffer = new byte[4096];
                    try {
                        int n;
                        while ((n = stream.read(buffer)) > 0) {
                            if (into == null) continue;
                            into.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
                            if (into.length() > 8192) into.delete(0, into.length() - 4096);
                        }
                    } catch (IOException e) {
                        // The process ended.
                    }
                },
                "tenant-sandbox-output");
        reader.setDaemon(true);
        reader.start();
    }

    private static void stop(Process process) {
        process.destroy(); // SIGTERM
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the sandbox (SIGTERM, then SIGKILL after 5 s) and waits for it; safe to call twice. */
    @Override
    public void close() {
        stop(process);
    }

    private Map<String, Object> call(String method, String path, Map<String, Object> body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(url(path))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json");
        request.method(
                method,
                body == null
                        ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(Json.write(body)));
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw failed(method + " " + path + ": " + e + tail(stderr), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(method + " " + path + ": interrupted", e);
        }
        String text = response.body();
        if (response.statusCode() >= 400) {
            throw failed(
                    method + " " + path + " answered " + response.statusCode() + ": "
                            + text.substring(0, Math.min(300, text.length())),
                    null);
        }
        return Json.parseObject(text).orElseThrow(() -> failed(method + " " + path + " answered no JSON", null));
    }

    /** Reads the sandbox's clock offset again (another process may have moved it). */
    public void syncClock() {
        setOffset(call("GET", "/__sandbox/clock", null).get("offsetSeconds"));
    }

    private void setOffset(Object seconds) {
        if (!(seconds instanceof Number number)) throw failed("the clock's offsetSeconds is not a number", null);
        clock.offset(Duration.ofNanos(Math.round(number.doubleValue() * 1e9)));
    }

    /**
     * Moves the sandbox's clock forward by {@code by}, and {@link #clock()} with it.
     *
     * @throws SandboxException {@code SANDBOX_FAILED} for a negative duration, or when the sandbox refuses
     */
    public void advance(Duration by) {
        if (by.isNegative()) throw failed("the clock moves forward only, not by " + by, null);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("advanceSeconds", by.toNanos() / 1e9);
        setOffset(call("POST", "/__sandbox/clock", body).get("offsetSeconds"));
    }

    /** The sandbox's token and revoke events with a {@code seq} above {@code after}, oldest first. */
    public List<SandboxEvent> events(long after) {
        List<SandboxEvent> out = new ArrayList<>();
        for (Object item : list(call("GET", "/__sandbox/events", null).get("events"))) {
            Map<String, Object> e = object(item);
            long seq = ((Number) e.get("seq")).longValue();
            if (seq <= after) continue;
            out.add(new SandboxEvent(
                    seq,
                    text(e.get("time")),
                    text(e.get("endpoint")),
                    text(e.get("grantType")),
                    text(e.get("clientId")),
                    ((Number) e.get("status")).intValue(),
                    text(e.get("outcome")),
                    text(e.get("detail"))));
        }
        return out;
    }

    /** The {@code seq} of the latest event (0 when none): pass it as {@code after} to see only what follows. */
    public long lastSeq() {
        List<SandboxEvent> events = events(0);
        return events.isEmpty() ? 0 : events.get(events.size() - 1).seq();
    }

    /** How many refresh grants succeeded (HTTP 200) after event {@code after} (RFC 6749 §6). */
    public long refreshCount(long after) {
        return events(after).stream()
                .filter(e -> "refresh_token".equals(e.grantType()) && e.status() == 200)
                .count();
    }

    /** The refresh-token ledger: who presented which refresh token (by fingerprint), and every reuse. */
    public Ledger ledger() {
        Map<String, Object> body = call("GET", "/__sandbox/ledger", null);
        List<Ledger.RefreshToken> tokens = new ArrayList<>();
        for (Object item : list(body.get("refreshTokens"))) {
            Map<String, Object> t = object(item);
            List<Ledger.Presentation> presentations = new ArrayList<>();
            for (Object p : list(t.get("presentations"))) {
                Map<String, Object> m = object(p);
                presentations.add(new Ledger.Presentation(
                        ((Number) m.get("seq")).longValue(),
                        text(m.get("actor")),
                        text(m.get("outcome")),
                        text(m.get("detail"))));
            }
            tokens.add(new Ledger.RefreshToken(text(t.get("fingerprint")), text(t.get("family")), presentations));
        }
        List<Ledger.Reuse> reuses = new ArrayList<>();
        for (Object item : list(body.get("reuses"))) {
            Map<String, Object> r = object(item);
            reuses.add(new Ledger.Reuse(text(r.get("fingerprint")), text(r.get("family")), text(r.get("actor"))));
        }
        List<Ledger.Family> families = new ArrayList<>();
        for (Object item : list(body.get("families"))) {
            Map<String, Object> f = object(item);
            families.add(new Ledger.Family(
                    text(f.get("id")), Boolean.TRUE.equals(f.get("revoked")), text(f.get("revokedBy"))));
        }
        return new Ledger(tokens, reuses, families);
    }

    private static String text(Object value) {
        return value instanceof String s ? s : null;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value) {
        if (value instanceof Map<?, ?> map) return (Map<String, Object>) map;
        throw failed("the sandbox answered an unexpected shape", null);
    }

    private static List<?> list(Object value) {
        if (value instanceof List<?> list) return list;
        throw failed("the sandbox answered an unexpected shape", null);
    }

    /** Its URL and pid. */
    @Override
    public String toString() {
        return "Sandbox[" + url + ", pid " + process.pid() + "]";
    }

    /** The options of a sandbox to start; immutable: each method returns a new builder. */
    public static final class Builder {
        private List<Client> clients = List.of(new Client(DEFAULT_CLIENT_ID, List.of(DEFAULT_REDIRECT_URI), List.of()));
        private List<String> command;
        private List<String> args = List.of();
        private Duration startup = Duration.ofSeconds(30);

        private Builder() {}

        private Builder copy() {
            Builder b = new Builder();
            b.clients = clients;
            b.command = command;
            b.args = args;
            b.startup = startup;
            return b;
        }

        /** The OAuth clients to register (default: {@link #DEFAULT_CLIENT_ID} with {@link #DEFAULT_REDIRECT_URI}, any scope). */
        public Builder clients(Client... clients) {
            Builder b = copy();
            b.clients = List.of(clients);
            return b;
        }

        /** The command that starts the sandbox, e.g. {@code "node", "/path/to/sandbox/dist/cli.js"}. */
        public Builder command(String... argv) {
            Builder b = copy();
            b.command = List.of(argv);
            return b;
        }

        /** More options of {@code tenant-sandbox}, e.g. {@code "--rotation-grace", "30"}. */
        public Builder args(String... args) {
            Builder b = copy();
            List<String> more = new ArrayList<>(this.args);
            more.addAll(List.of(args));
            b.args = List.copyOf(more);
            return b;
        }

        /** The bound of the wait for the sandbox's first line (default 30 s). */
        public Builder startupTimeout(Duration startup) {
            Builder b = copy();
            b.startup = Objects.requireNonNull(startup, "startup");
            return b;
        }

        /**
         * Starts the sandbox.
         *
         * @throws SandboxException {@code SANDBOX_FAILED}
         */
        public Sandbox start() {
            return launch(this);
        }
    }
}
