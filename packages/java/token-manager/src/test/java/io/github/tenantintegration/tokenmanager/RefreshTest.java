package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

class RefreshTest {
    @AutoClose
    private final FakeTenant tenant = FakeTenant.start();

    private final TestClock clock = new TestClock();
    private final List<Event> events = new CopyOnWriteArrayList<>();

    private TokenManager.Builder manager() {
        return tenant.manager().clock(clock).retryDelay(Duration.ofMillis(10)).onChange(events::add);
    }

    @Test
    void twentyThreadsAfterExpiryMakeOneRefresh() throws Exception {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        String first = manager.accessToken();
        clock.advance(Duration.ofMinutes(16));
        tenant.tokenDelayMs = 200;
        ExecutorService pool = Executors.newFixedThreadPool(20);
        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < 20; i++) calls.add(pool.submit(manager::accessToken));
        Set<String> tokens = ConcurrentHashMap.newKeySet();
        for (Future<String> call : calls) tokens.add(call.get());
        pool.shutdown();
        assertEquals(1, tenant.refreshes());
        assertEquals(Set.of(tenant.accessToken), tokens);
        assertNotEquals(first, tenant.accessToken);
        assertTrue(events.stream().anyMatch(e -> e.kind() == Event.Kind.TOKENS_REFRESHED));
    }

    @Test
    void theRotatedTokensAreStoredBeforeTheyAreHandedOut() {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = manager().storage(storage).build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        String token = manager.accessToken();
        TokenRecord stored =
                TokenRecord.parse(storage.data.get(storage.key("tokens"))).orElseThrow();
        assertEquals(token, stored.accessToken);
        assertEquals(tenant.refreshToken, stored.refreshToken);
        assertEquals(1, stored.seq);
        assertFalse(
                storage.data.containsKey(storage.key("intent")), "the intent is deleted once the tokens are stored");
        assertTrue(tenant.requests("/oauth/token")
                .get(1)
                .body()
                .startsWith("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"rt_refresh_1"));
    }

    @Test
    void invalidGrantEndsTheSessionAndClearsTheTokens() {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        tenant.answers.add(FakeTenant.Answer.of(
                400, "{\"error\":\"invalid_grant\",\"error_description\":\"refresh token reused\"}"));
        SessionEndedException e = assertThrows(SessionEndedException.class, manager::accessToken);
        assertEquals(ErrorCode.SESSION_ENDED, e.code());
        assertEquals("invalid_grant", e.error());
        assertFalse(manager.isSignedIn());
        assertTrue(events.stream().anyMatch(ev -> ev.kind() == Event.Kind.SESSION_ENDED));
        assertEquals(
                ErrorCode.NOT_SIGNED_IN,
                assertThrows(TokenManagerException.class, manager::accessToken).code());
    }

    @Test
    void a503IsSentAgainButA500IsNotAndKeepsTheTokens() {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        tenant.answers.add(FakeTenant.Answer.of(503, "{}"));
        manager.accessToken();
        assertEquals(2, tenant.refreshes());

        clock.advance(Duration.ofMinutes(16));
        tenant.answers.add(FakeTenant.Answer.of(500, "{}"));
        TransientException e = assertThrows(TransientException.class, manager::accessToken);
        assertEquals(500, e.status());
        assertEquals(1, e.attempts());
        assertEquals(3, tenant.refreshes());
        assertTrue(manager.isSignedIn());
    }

    @Test
    void aRetryAfterLongerThanTenSecondsIsNotWaitedFor() {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        tenant.answers.add(new FakeTenant.Answer(429, "{}", Map.of("Retry-After", "30"), 0));
        TransientException e = assertThrows(TransientException.class, manager::accessToken);
        assertEquals(Duration.ofSeconds(30), e.retryAfter());
        assertEquals(2, tenant.requests("/oauth/token").size());
    }

    @Test
    void aRequestThatNeverLeftIsRetriedThenReportedTransient() {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        tenant.close();
        TransientException e = assertThrows(TransientException.class, manager::accessToken);
        assertEquals(0, e.status());
        assertEquals(3, e.attempts());
        assertFalse(e.sent());
    }

    @Test
    void aRequestWithoutAnAnswerInTheTimeoutIsNotRetried() {
        TokenManager manager = manager().requestTimeout(Duration.ofMillis(300)).build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        tenant.tokenDelayMs = 2000;
        TransientException e = assertThrows(TransientException.class, manager::accessToken);
        assertEquals(1, e.attempts());
        assertTrue(e.sent());
    }

    @Test
    void aRefreshWithoutARefreshTokenKeepsThePreviousOne() {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = manager().storage(storage).build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        tenant.answers.add(FakeTenant.Answer.of(
                200, "{\"access_token\":\"at_new_abcdefgh\",\"token_type\":\"Bearer\",\"expires_in\":900}"));
        assertEquals("at_new_abcdefgh", manager.accessToken());
        assertEquals(
                "rt_refresh_1_abcdefgh",
                TokenRecord.parse(storage.data.get(storage.key("tokens"))).orElseThrow().refreshToken);
    }

    @Test
    void a401RefusedTokenIsRefreshedEvenWhileFresh() {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        String refused = manager.accessToken();
        manager.onUnauthorized("some other token");
        assertEquals(refused, manager.accessToken());
        manager.onUnauthorized(refused);
        assertNotEquals(refused, manager.accessToken());
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void tokensWhoseWriteFailedAreServedAndNeverRefreshedUntilWritten() {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = manager().storage(storage).build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        storage.failSet = key -> key.endsWith(":tokens");
        String served = manager.accessToken();
        assertEquals(tenant.accessToken, served);
        assertTrue(events.stream().anyMatch(e -> e.kind() == Event.Kind.STORAGE_FAILED));
        assertTrue(
                storage.data.containsKey(storage.key("intent")), "the intent stays while the tokens are not written");
        clock.advance(Duration.ofMinutes(16));
        TokenManagerException e = assertThrows(TokenManagerException.class, manager::accessToken);
        assertEquals(ErrorCode.STORAGE_FAILED, e.code());
        assertEquals(1, tenant.refreshes());
        storage.failSet = key -> false;
        manager.accessToken();
        assertEquals(2, tenant.refreshes());
        assertFalse(storage.data.containsKey(storage.key("intent")));
    }

    @Test
    void signOutForgetsAndRevokeDisconnects() {
        TokenManager manager = manager().build();
        FakeTenant.signIn(manager);
        String token = manager.accessToken();
        manager.revoke();
        FakeTenant.Request revoke = tenant.requests("/oauth/revoke").get(0);
        assertEquals("application/x-www-form-urlencoded", revoke.header("Content-Type"));
        assertEquals("token=" + token + "&token_type_hint=access_token&client_id=demo", revoke.body());
        assertFalse(manager.isSignedIn());
        FakeTenant.signIn(manager);
        manager.signOut();
        assertFalse(manager.isSignedIn());
        assertEquals(1, tenant.requests("/oauth/revoke").size());
    }
}
