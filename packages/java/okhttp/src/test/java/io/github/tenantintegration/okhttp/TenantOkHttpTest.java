package io.github.tenantintegration.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.tokenmanager.AuthorizationRequest;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TenantOkHttpTest {
    /** A tenant that issues at_1, at_2… and answers the API 200 for the latest token only; and a bystander host. */
    private HttpServer tenant;

    private HttpServer elsewhere;
    private final AtomicInteger issued = new AtomicInteger();
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private volatile String current;

    private static HttpServer server() throws IOException {
        return HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    }

    private static void write(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @BeforeEach
    void start() throws IOException {
        tenant = server();
        tenant.createContext("/oauth/token", exchange -> {
            exchange.getRequestBody().readAllBytes();
            int n = issued.incrementAndGet();
            current = "at_token_" + n + "_abcdefgh";
            write(
                    exchange,
                    200,
                    "{\"access_token\":\"" + current + "\",\"refresh_token\":\"rt_token_" + n
                            + "_abcdefgh\",\"token_type\":\"Bearer\",\"expires_in\":900}");
        });
        tenant.createContext("/api/v1/auth/user", exchange -> {
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            seen.add(authorization + " | " + exchange.getRequestHeaders().getFirst("Accept"));
            write(exchange, ("Bearer " + current).equals(authorization) ? 200 : 401, "{}");
        });
        tenant.start();
        elsewhere = server();
        elsewhere.createContext("/", exchange -> {
            seen.add("elsewhere " + exchange.getRequestHeaders().getFirst("Authorization"));
            write(exchange, 200, "{}");
        });
        elsewhere.start();
    }

    @AfterEach
    void stop() {
        tenant.stop(0);
        elsewhere.stop(0);
    }

    private String url(HttpServer server) {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private TokenManager signedIn() {
        TokenManager manager = TokenManager.builder(url(tenant), "demo", "http://127.0.0.1:53682/callback")
                .scopes(Scope.PROFILE_READ)
                .build();
        AuthorizationRequest request = manager.beginAuthorization();
        String state = request.url().getRawQuery().replaceAll(".*state=([^&]*).*", "$1");
        manager.completeAuthorization(manager.redirectUri() + "?code=code_abcdefghij&state=" + state);
        return manager;
    }

    private static int get(OkHttpClient client, String url) throws IOException {
        try (Response response =
                client.newCall(new Request.Builder().url(url).build()).execute()) {
            return response.code();
        }
    }

    @Test
    void theTokenGoesToTheTenantOnlyWithAcceptJson() throws IOException {
        TokenManager manager = signedIn();
        OkHttpClient client =
                TenantOkHttp.configure(new OkHttpClient.Builder(), manager).build();
        assertEquals(200, get(client, url(tenant) + "/api/v1/auth/user"));
        assertEquals(200, get(client, url(elsewhere) + "/anything"));
        assertEquals(List.of("Bearer at_token_1_abcdefgh | application/json", "elsewhere null"), seen);
    }

    @Test
    void a401RefreshesOnceAndSendsTheRequestAgain() throws IOException {
        TokenManager manager = signedIn();
        manager.accessToken();
        current = "revoked by the tenant";
        OkHttpClient client =
                TenantOkHttp.configure(new OkHttpClient.Builder(), manager).build();
        assertEquals(200, get(client, url(tenant) + "/api/v1/auth/user"));
        assertEquals(2, issued.get(), "one sign-in, one refresh");
        assertEquals("Bearer at_token_2_abcdefgh | application/json", seen.get(1));
    }

    @Test
    void aManagersFailureFailsTheCallWithItsCode() {
        TokenManager manager = TokenManager.builder(url(tenant), "demo", "http://127.0.0.1:53682/callback")
                .scopes(Scope.PROFILE_READ)
                .build();
        OkHttpClient client =
                TenantOkHttp.configure(new OkHttpClient.Builder(), manager).build();
        IOException e = assertThrows(IOException.class, () -> get(client, url(tenant) + "/api/v1/auth/user"));
        assertEquals(ErrorCode.NOT_SIGNED_IN, ((TokenManagerException) e.getCause()).code());
        assertTrue(seen.isEmpty());
        assertNull(TenantOkHttp.withToken(
                        new Request.Builder()
                                .url(url(tenant))
                                .header("Accept", "text/csv")
                                .build(),
                        "t")
                .header("X-None"));
    }
}
