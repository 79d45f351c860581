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
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process tenant for unit tests: answers {@code /oauth/token} with rotating tokens (or with the
 * answers queued by a test), {@code /oauth/revoke} with 200 and {@code /api/v1/auth/user} for the current
 * access token; records every request.
 */
final class FakeTenant implements AutoCloseable {
    /** A request as received. */
    record Request(String method, String path, Map<String, List<String>> headers, String body) {
        String header(String name) {
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
    volatile String accessToken;
    volatile String refreshToken;
    volatile long tokenDelayMs;

    /** A fake tenant for one test, as a field: {@code @AutoClose} stops it when the test ends. */
    static FakeTenant start() {
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

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The requests to {@code path}. */
    List<Request> requests(String path) {
        synchronized (requests) {
            return requests.stream().filter(r -> r.path().equals(path)).toList();
        }
    }

    /** How many refresh grants reached the token endpoint. */
    long refreshes() {
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
    TokenManager.Builder manager() {
        return TokenManager.builder(url(), "demo", "http://127.0.0.1:53682/callback")
                .scopes(io.github.tenantintegration.api.Scope.PROFILE_READ);
    }

    /** Signs {@code manager} in: the authorize step played here (the fake issues a code for any state). */
    static SessionInfo signIn(TokenManager manager) {
        AuthorizationRequest request = manager.beginAuthorization();
        String query = request.url().getRawQuery();
        String state = null;
        for (String pair : query.split("&")) if (pair.startsWith("state=")) state = pair.substring(6);
        return manager.completeAuthorization(manager.redirectUri() + "?code=code_abcdefghij&state=" + state);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
