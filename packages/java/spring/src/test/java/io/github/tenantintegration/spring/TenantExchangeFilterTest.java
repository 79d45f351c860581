package io.github.tenantintegration.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.FakeTenant;
import io.github.tenantintegration.tokenmanager.MemoryStorage;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/** WebClient with {@link TenantExchangeFilter}, against the kit's fake tenant. */
class TenantExchangeFilterTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @AutoClose
    final FakeTenant tenant = FakeTenant.start();

    @AutoClose
    final FakeTenant elsewhere = FakeTenant.start();

    private TokenManager signedIn() {
        TokenManager manager = tenant.manager().build();
        FakeTenant.signIn(manager);
        return manager;
    }

    private static WebClient client(TenantExchangeFilter filter) {
        return WebClient.builder()
                .clientConnector(new JdkClientHttpConnector())
                .filter(filter)
                .build();
    }

    /** The status of the answer to {@code request}, whatever it is. */
    private static int status(WebClient.RequestHeadersSpec<?> request) {
        return request.exchangeToMono(response ->
                        response.releaseBody().thenReturn(response.statusCode().value()))
                .block(WAIT);
    }

    @Test
    void theTokenGoesToTheTenantOnlyWithAcceptJsonUnlessTheRequestHasOne() {
        WebClient client = client(TenantExchangeFilter.of(signedIn()));
        assertEquals(
                "{\"id\":42}",
                client.get()
                        .uri(tenant.url() + "/api/v1/auth/user")
                        .retrieve()
                        .bodyToMono(String.class)
                        .block(WAIT));
        assertEquals(
                200, status(client.get().uri(tenant.url() + "/api/v1/auth/user").header("Accept", "text/csv")));
        assertEquals(401, status(client.get().uri(elsewhere.url() + "/api/v1/auth/user")));
        List<FakeTenant.Request> sent = tenant.requests("/api/v1/auth/user");
        assertEquals("Bearer " + tenant.accessToken, sent.get(0).header("Authorization"));
        assertEquals("application/json", sent.get(0).header("Accept"));
        assertEquals("text/csv", sent.get(1).header("Accept"));
        assertNull(elsewhere.requests("/api/v1/auth/user").get(0).header("Authorization"));
    }

    @Test
    void a401RefreshesOnceAndSendsTheRequestAgainWithItsBody() {
        TokenManager manager = signedIn();
        tenant.accessToken = "revoked by the tenant";
        WebClient client = client(TenantExchangeFilter.of(manager));
        assertEquals(
                200,
                status(client.post().uri(tenant.url() + "/api/v1/auth/user").bodyValue("{\"note\":\"sent twice\"}")));
        assertEquals(1, tenant.refreshes());
        List<FakeTenant.Request> sent = tenant.requests("/api/v1/auth/user");
        assertEquals(2, sent.size());
        assertEquals("{\"note\":\"sent twice\"}", sent.get(1).body());
        assertEquals("Bearer " + tenant.accessToken, sent.get(1).header("Authorization"));
    }

    @Test
    void aOneShotBodyIsNotSentAgainButTheNextRequestCarriesTheNewToken() {
        TokenManager manager = signedIn();
        tenant.accessToken = "revoked by the tenant";
        WebClient client = client(TenantExchangeFilter.of(manager));
        assertEquals(
                401,
                status(client.post()
                        .uri(tenant.url() + "/api/v1/auth/user")
                        .attribute(TenantExchangeFilter.ONE_SHOT_BODY, true)
                        .bodyValue("{\"note\":\"sent once\"}")));
        assertEquals(1, tenant.requests("/api/v1/auth/user").size());
        assertEquals(200, status(client.get().uri(tenant.url() + "/api/v1/auth/user")));
        assertEquals(1, tenant.refreshes());
    }

    @Test
    @Timeout(30)
    void aRefreshNeverBlocksTheThreadThatSubscribes() throws Exception {
        TokenManager manager = signedIn();
        manager.onUnauthorized(manager.accessToken()); // the next request needs a refresh
        CountDownLatch gate = new CountDownLatch(1);
        tenant.tokenGate = gate; // the token endpoint holds the refresh until the gate opens
        WebClient client = client(TenantExchangeFilter.of(manager));
        CompletableFuture<Integer> answer = new CompletableFuture<>();
        // A filter that blocked on the refresh would not return from subscribe() until the gate opened,
        // which happens only after it returned: the test would hang until its timeout.
        client.get()
                .uri(tenant.url() + "/api/v1/auth/user")
                .exchangeToMono(response ->
                        response.releaseBody().thenReturn(response.statusCode().value()))
                .subscribe(answer::complete, answer::completeExceptionally);
        assertFalse(answer.isDone());
        assertTrue(tenant.requests("/api/v1/auth/user").isEmpty());
        gate.countDown();
        assertEquals(200, answer.get(10, TimeUnit.SECONDS));
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void aManagersFailureIsTheExchangesErrorWithItsCodeAndNothingIsSent() {
        WebClient client = client(TenantExchangeFilter.of(tenant.manager().build()));
        TokenManagerException e = assertThrows(
                TokenManagerException.class,
                () -> client.get()
                        .uri(tenant.url() + "/api/v1/auth/user")
                        .retrieve()
                        .toBodilessEntity()
                        .block(WAIT));
        assertEquals(ErrorCode.NOT_SIGNED_IN, e.code());
        assertTrue(tenant.requests("/api/v1/auth/user").isEmpty());
    }

    @Test
    void eachRequestCarriesTheTokenOfTheSessionItNames() {
        Sessions sessions =
                Sessions.builder(tenant.manager().storage(new MemoryStorage())).build();
        FakeTenant.signIn(sessions, "42");
        String fortyTwos = sessions.accessToken("42");
        FakeTenant.signIn(sessions, "ada@example.org"); // the fake tenant's API takes the latest token only
        String adas = sessions.accessToken("ada@example.org");
        WebClient client = client(TenantExchangeFilter.of(sessions));
        status(client.get()
                .uri(tenant.url() + "/api/v1/auth/user")
                .attribute(TenantExchangeFilter.SESSION_ID, "ada@example.org"));
        assertEquals(
                "Bearer " + adas, tenant.requests("/api/v1/auth/user").get(0).header("Authorization"));
        TokenManagerException none = assertThrows(
                TokenManagerException.class, () -> status(client.get().uri(tenant.url() + "/api/v1/auth/user")));
        assertEquals(ErrorCode.INVALID_SESSION_ID, none.code());
        assertEquals(1, tenant.requests("/api/v1/auth/user").size(), "nothing sent without a session");

        // A session id from the subscriber's context, as ReactiveSecurityContextHolder keeps the user.
        WebClient contextual = client(TenantExchangeFilter.of(
                sessions, request -> Mono.deferContextual(context -> Mono.just(context.<String>get("user")))));
        contextual
                .get()
                .uri(tenant.url() + "/api/v1/auth/user")
                .retrieve()
                .toBodilessEntity()
                .contextWrite(context -> context.put("user", "42"))
                .block(WAIT);
        assertEquals(
                "Bearer " + fortyTwos,
                tenant.requests("/api/v1/auth/user").get(1).header("Authorization"));
    }
}
