package io.github.tenantintegration.tokenmanager;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.tenantintegration.internal.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process tenant for unit tests: answers {@code /oauth/token} with rotating tokens (or with the
 * answers queued by a test), {@code /oauth/revoke} with 200 and {@code /api/v1/auth/user} for the current
 * access token; records every request. A test fixture (src/testFixtures), compiled with the tests of
 * every module that adds it, so public for the adapters' tests (the spring module's).
 */
public final class FakeTenant implements AutoCloseable {
    /** A request as received. */
    public record Request(String method, String path, Map<String, List<String>> headers, String body) {
        /** The first value of header {@code name} (any case), or null. */
        public String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) return e.getValue().get(0);
            }
            return null;
        }
    }

    /** A queued answer of the token endpoint. */
    record Answer(int status, String body, Map<String, String> headers, long delayMs) {
        static Answer of(int status, String body) {
            return new Answer(status, body, Map.of(), 0);
        }
    }

    final HttpServer server;
    final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
    final Deque<Answer> answers = new ConcurrentLinkedDeque<>();
    final AtomicInteger issued = new AtomicInteger();
    /** The access token the API accepts; a test that sets another makes the tenant refuse the current one. */
    public volatile String accessToken;

    volatile String refreshToken;
    volatile long tokenDelayMs;
    /** While set and not counted down, the token endpoint holds every request (a refresh in flight). */
    public volatile CountDownLatch tokenGate;

    /** A fake tenant for one test, as a field: {@code @AutoClose} stops it when the test ends. */
    public static FakeTenant start() {
        try {
            return new FakeTenant();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    FakeTenant() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "fake-tenant");
            thread.setDaemon(true);
            return thread;
        }));
        server.createContext("/", this::serve);
        server.start();
    }

    /** The tenant's base URL, {@code http://127.0.0.1:<port>}. */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The requests to {@code path}. */
    public List<Request> requests(String path) {
        synchronized (requests) {
            return requests.stream().filter(r -> r.path().equals(path)).toList();
        }
    }

    /** How many refresh grants reached the token endpoint. */
    public long refreshes() {
        return requests("/oauth/token").stream()
                .filter(r -> r.body().contains("\"grant_type\":\"refresh_token\""))
                .count();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String path = exchange.getRequestURI().getPath();
            requests.add(
                    new Request(exchange.getRequestMethod(), path, Map.copyOf(exchange.getRequestHeaders()), body));
            switch (path) {
                case "/oauth/token" -> token(exchange);
                case "/oauth/revoke" -> write(exchange, Answer.of(200, "{}"));
                case "/api/v1/auth/user" -> {
                    String authorization = exchange.getRequestHeaders().getFirst("Authorization");
                    boolean ok = authorization != null && authorization.equals("Bearer " + accessToken);
                    write(exchange, ok ? Answer.of(200, "{\"id\":42}") : Answer.of(401, "{}"));
                }
                default -> write(exchange, Answer.of(404, "{}"));
            }
        }
    }

    private void token(HttpExchange exchange) throws IOException {
        awaitGate();
        Answer queued = answers.poll();
        if (queued != null) {
            write(exchange, queued);
            return;
        }
        sleep(tokenDelayMs);
        int n = issued.incrementAndGet();
        accessToken = "at_access_" + n + "_abcdefgh";
        refreshToken = "rt_refresh_" + n + "_abcdefgh";
        Map<String, Object> tokens = new LinkedHashMap<>();
        tokens.put("access_token", accessToken);
        tokens.put("refresh_token", refreshToken);
        tokens.put("token_type", "Bearer");
        tokens.put("expires_in", 900);
        write(exchange, Answer.of(200, Json.write(tokens)));
    }

    private void awaitGate() {
        CountDownLatch gate = tokenGate;
        if (gate == null) return;
        try {
            gate.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleep(long ms) {
        if (ms <= 0) return;
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void write(HttpExchange exchange, Answer answer) throws IOException {
        sleep(answer.delayMs());
        byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        answer.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
        exchange.sendResponseHeaders(answer.status(), bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** A builder of a manager on this tenant. */
    public TokenManager.Builder manager() {
        return TokenManager.builder(url(), "demo", "http://127.0.0.1:53682/callback")
                .scopes(io.github.tenantintegration.api.Scope.PROFILE_READ);
    }

    /** Signs {@code manager} in: the authorize step played here (the fake issues a code for any state). */
    public static SessionInfo signIn(TokenManager manager) {
        return manager.completeAuthorization(callback(manager.redirectUri(), manager.beginAuthorization()));
    }

    /** Signs session {@code sessionId} of {@code sessions} in, as its user's browser would. */
    public static SessionInfo signIn(Sessions sessions, String sessionId) {
        Sessions.Started started = sessions.beginSignIn(sessionId, null);
        String url = callback(sessions.redirectUri(), started.request());
        return sessions.completeSignIn(new Sessions.Callback(url, started.binding(), sessionId))
                .info();
    }

    /** The callback the tenant would send for {@code request}: a code, and the request's state. */
    private static String callback(String redirectUri, AuthorizationRequest request) {
        String state = null;
        for (String pair : request.url().getRawQuery().split("&"))
            if (pair.startsWith("state=")) state = pair.substring(6);
        return redirectUri + "?code=code_abcdefghij&state=" + state;
    }

    @Override
    public void close() {
        CountDownLatch gate = tokenGate;
        if (gate != null) gate.countDown();
        server.stop(0);
    }
}
