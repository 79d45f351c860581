package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.internal.Json;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

class SignInTest {
    @AutoClose
    private final FakeTenant tenant = FakeTenant.start();

    private static String param(AuthorizationRequest request, String name) {
        for (String pair : request.url().getRawQuery().split("&"))
            if (pair.startsWith(name + "=")) return pair.substring(name.length() + 1);
        return null;
    }

    @Test
    void theAuthorizeUrlCarriesPkceS256AndARandomState() {
        TokenManager manager =
                tenant.manager().scopes(Scope.PROFILE_READ, Scope.TICKETS_READ).build();
        AuthorizationRequest request = manager.beginAuthorization();
        assertTrue(request.url()
                .toString()
                .startsWith(tenant.url() + "/oauth/authorize?response_type=code&client_id=demo&"));
        assertEquals("S256", param(request, "code_challenge_method"));
        assertEquals("profile%3Aread%20tickets%3Aread", param(request, "scope"));
        assertEquals(43, param(request, "state").length());
        assertEquals(43, param(request, "code_challenge").length());
        assertFalse(request.toString().contains(param(request, "state")));
    }

    @Test
    void signingInExchangesTheCodeAsJsonWithTheVerifier() {
        TokenManager manager = tenant.manager().build();
        AuthorizationRequest request = manager.beginAuthorization();
        SessionInfo session = manager.completeAuthorization(
                manager.redirectUri() + "?code=code_abcdefghij&state=" + param(request, "state"));
        FakeTenant.Request exchange = tenant.requests("/oauth/token").get(0);
        assertEquals("application/json", exchange.header("Content-Type"));
        assertEquals("application/json", exchange.header("Accept"));
        Map<String, Object> body = Json.parseObject(exchange.body()).orElseThrow();
        assertEquals("authorization_code", body.get("grant_type"));
        assertEquals("demo", body.get("client_id"));
        assertEquals("code_abcdefghij", body.get("code"));
        assertEquals(PkcePair.challenge((String) body.get("code_verifier")), param(request, "code_challenge"));
        assertTrue(session.expiresAt().isAfter(java.time.Instant.now().plus(Duration.ofMinutes(14))));
        assertEquals(tenant.accessToken, manager.accessToken());
    }

    @Test
    void aCallbackWhoseStateDiffersByOneCharacterFindsNoSignInAndSendsNothing() {
        TokenManager manager = tenant.manager().build();
        String state = param(manager.beginAuthorization(), "state");
        String other = state.substring(0, 42) + (state.charAt(42) == 'A' ? 'B' : 'A');
        TokenManagerException e = assertThrows(
                TokenManagerException.class,
                () -> manager.completeAuthorization(manager.redirectUri() + "?code=c&state=" + other));
        // Found by its state (spec/token-store, "Pending sign-ins by state"): another state finds none.
        assertEquals(ErrorCode.NO_PENDING_SIGN_IN, e.code());
        assertTrue(tenant.requests("/oauth/token").isEmpty());
        // The right state still completes it, once.
        manager.completeAuthorization(manager.redirectUri() + "?code=code_abcdefghij&state=" + state);
        assertEquals(
                ErrorCode.NO_PENDING_SIGN_IN,
                assertThrows(
                                TokenManagerException.class,
                                () -> manager.completeAuthorization(manager.redirectUri() + "?code=c&state=" + state))
                        .code());
    }

    @Test
    void aRecordUnderTheStatesKeyWithAnotherStateIsAMismatch() {
        MemoryStorage storage = new MemoryStorage();
        TokenManager manager = tenant.manager().storage(storage).build();
        String state = param(manager.beginAuthorization(), "state");
        String name = manager.pending.name(state);
        String planted = storage.get(name).orElseThrow().replace(state, "B".repeat(43));
        storage.set(name, planted);
        assertEquals(
                ErrorCode.STATE_MISMATCH,
                assertThrows(
                                TokenManagerException.class,
                                () -> manager.completeAuthorization(manager.redirectUri() + "?code=c&state=" + state))
                        .code());
        assertTrue(storage.get(name).isEmpty());
        assertTrue(tenant.requests("/oauth/token").isEmpty());
    }

    @Test
    void twoSignInsOfOneManagerBothComplete() {
        TokenManager manager = tenant.manager().build();
        String first = param(manager.beginAuthorization(), "state");
        String second = param(manager.beginAuthorization(), "state");
        manager.completeAuthorization(manager.redirectUri() + "?code=code_abcdefghij&state=" + second);
        manager.completeAuthorization(manager.redirectUri() + "?code=code_abcdefghij&state=" + first);
        assertEquals(2, tenant.requests("/oauth/token").size());
    }

    @Test
    void callbacksThatCannotBeTrustedAreRefused() {
        TokenManager manager = tenant.manager().build();
        String state = param(manager.beginAuthorization(), "state");
        for (String callback : List.of(
                "/callback?code=c&state=" + state,
                "http://127.0.0.1:53682/other?code=c&state=" + state,
                "http://127.0.0.1:53682/callback?code=c&state=" + state + "&state=" + state)) {
            assertEquals(
                    ErrorCode.INVALID_CALLBACK,
                    assertThrows(TokenManagerException.class, () -> manager.completeAuthorization(callback))
                            .code(),
                    callback);
        }
        assertEquals(
                ErrorCode.STATE_MISSING,
                assertThrows(
                                TokenManagerException.class,
                                () -> manager.completeAuthorization(manager.redirectUri() + "?code=c"))
                        .code());
        assertTrue(tenant.requests("/oauth/token").isEmpty());
    }

    @Test
    void anExpiredPendingSignInIsRefused() {
        TestClock clock = new TestClock();
        TokenManager manager = tenant.manager().clock(clock).build();
        String state = param(manager.beginAuthorization(), "state");
        clock.advance(Duration.ofMinutes(11));
        assertEquals(
                ErrorCode.STATE_EXPIRED,
                assertThrows(
                                TokenManagerException.class,
                                () -> manager.completeAuthorization(manager.redirectUri() + "?code=c&state=" + state))
                        .code());
    }

    @Test
    void aDeniedAuthorizationSaysWhyWithoutASecret() {
        TokenManager manager = tenant.manager().build();
        String state = param(manager.beginAuthorization(), "state");
        OAuthException e = assertThrows(
                OAuthException.class,
                () -> manager.completeAuthorization(manager.redirectUri()
                        + "?error=access_denied&error_description=the+user+said+no+to+" + state + "&state=" + state));
        assertEquals(ErrorCode.AUTHORIZATION_DENIED, e.code());
        assertEquals("access_denied", e.error());
        assertFalse(e.getMessage().contains(state));
    }

    @Test
    void badOptionsAreRefusedNamingTheOption() {
        for (String base : List.of(
                "http://tenant.example", "ftp://x", "https://acme.tenant.test/path", "https://u:p@acme.tenant.test")) {
            TokenManagerException e = assertThrows(
                    TokenManagerException.class,
                    () -> TokenManager.builder(base, "demo", "http://127.0.0.1:53682/callback")
                            .scopes(Scope.PROFILE_READ)
                            .build());
            assertEquals(ErrorCode.INVALID_OPTIONS, e.code());
            assertTrue(e.getMessage().contains("baseUrl"), e.getMessage());
        }
        assertTrue(assertThrows(
                        TokenManagerException.class,
                        () -> tenant.manager().scopes(List.of()).build())
                .getMessage()
                .contains("scopes"));
        assertTrue(assertThrows(
                        TokenManagerException.class,
                        () -> tenant.manager()
                                .httpClient(java.net.http.HttpClient.newBuilder()
                                        .followRedirects(java.net.http.HttpClient.Redirect.ALWAYS)
                                        .build())
                                .build())
                .getMessage()
                .contains("httpClient"));
    }
}
