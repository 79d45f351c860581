package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The web handlers of a server's sign-in, as plain functions of a request (issue 39, point 5). */
class SignInHandlersTest {
    private FakeTenant tenant;
    private MemoryStorage storage;
    private Sessions sessions;
    private SignInHandlers handlers;
    private final List<RuntimeException> errors = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        tenant = new FakeTenant();
        storage = new MemoryStorage();
        sessions = Sessions.builder(tenant.manager().storage(storage)).build();
        handlers = SignInHandlers.builder(sessions)
                .afterSignIn("/account")
                .onError((request, e) -> errors.add(e))
                .build();
    }

    @AfterEach
    void stop() {
        tenant.close();
    }

    /** The browser: what the start answered it, then the tenant's redirect back with a code. */
    private static String cookieOf(SignInHandlers.Response started) {
        String set = started.header("Set-Cookie");
        return set.substring(0, set.indexOf(';'));
    }

    private static String queryBack(SignInHandlers.Response started) {
        String location = started.header("Location");
        String state = location.replaceAll(".*[?&]state=([^&]*).*", "$1");
        return "code=code_abcdefghij&state=" + state;
    }

    private SignInHandlers.Response begin(String user, String cookie) {
        return handlers.start(SignInHandlers.Request.of(
                "GET", "/connect", null, cookie == null ? List.of() : List.of("theme=dark; " + cookie), user));
    }

    private SignInHandlers.Response back(String user, String query, String cookie) {
        return handlers.callback(SignInHandlers.Request.of(
                "GET", "/callback", query, cookie == null ? List.of() : List.of(cookie), user));
    }

    @Test
    void twoUsersSigningInAtOnceEachGetTheirOwnSession() {
        SignInHandlers.Response ada = begin("ada", null);
        SignInHandlers.Response bob = begin("bob", null);
        assertEquals(303, ada.status());
        assertTrue(ada.header("Location").startsWith(tenant.url() + "/oauth/authorize?"));
        assertEquals("no-store", ada.header("Cache-Control"));
        SignInHandlers.Response bobBack = back("bob", queryBack(bob), cookieOf(bob));
        SignInHandlers.Response adaBack = back("ada", queryBack(ada), cookieOf(ada));
        assertEquals(303, bobBack.status());
        assertEquals("/account", adaBack.header("Location"));
        assertEquals("no-referrer", adaBack.header("Referrer-Policy"));
        assertEquals("no-store", adaBack.header("Cache-Control"));
        assertEquals("at_access_1_abcdefgh", sessions.accessToken("bob"));
        assertEquals("at_access_2_abcdefgh", sessions.accessToken("ada"));
        assertTrue(errors.isEmpty());
    }

    @Test
    void aCallbackSentToAnotherBrowserIsRefusedBeforeAnyExchange() {
        SignInHandlers.Response attacker = begin("mallory", null);
        SignInHandlers.Response victimCookie = begin("victim", null);
        SignInHandlers.Response answer = back("victim", queryBack(attacker), cookieOf(victimCookie));
        assertEquals(400, answer.status());
        assertEquals(
                "the sign-in could not be completed: the sign-in was started in another browser; start it again",
                answer.body());
        assertEquals(ErrorCode.STATE_MISMATCH, ((TokenManagerException) errors.get(0)).code());
        // Without any cookie, and as another logged-in user: refused too.
        SignInHandlers.Response again = begin("mallory", null);
        assertEquals(400, back("victim", queryBack(again), cookieOf(again)).status());
        assertEquals(
                400, back("mallory", queryBack(begin("mallory", null)), null).status());
        assertTrue(tenant.requests("/oauth/token").isEmpty());
        assertFalse(answer.body().contains("state="));
    }

    @Test
    void twoTabsShareOneCookieAndBothComplete() {
        SignInHandlers.Response tab1 = begin("ada", null);
        SignInHandlers.Response tab2 = begin("ada", cookieOf(tab1));
        assertEquals(cookieOf(tab1), cookieOf(tab2));
        assertEquals(303, back("ada", queryBack(tab2), cookieOf(tab2)).status());
        assertEquals(303, back("ada", queryBack(tab1), cookieOf(tab1)).status());
        SignInHandlers.Response replay = back("ada", queryBack(tab1), cookieOf(tab1));
        assertEquals(400, replay.status());
        assertEquals(
                "the sign-in could not be completed: it was already used, or has expired; start it again",
                replay.body());
    }

    @Test
    void methodsPathsAndLoginsAreChecked() {
        assertEquals(
                405,
                handlers.start(SignInHandlers.Request.of("PUT", "/connect", null, null, "ada"))
                        .status());
        assertEquals(
                "GET, POST",
                handlers.start(SignInHandlers.Request.of("PUT", "/connect", null, null, "ada"))
                        .header("Allow"));
        assertEquals(
                303,
                handlers.start(SignInHandlers.Request.of("POST", "/connect", null, null, "ada"))
                        .status());
        assertEquals(401, begin(null, null).status());
        assertEquals(
                405,
                handlers.callback(SignInHandlers.Request.of("POST", "/callback", "", null, "ada"))
                        .status());
        assertEquals(
                404,
                handlers.callback(SignInHandlers.Request.of("GET", "/elsewhere", "", null, "ada"))
                        .status());
        SignInHandlers.Response started = begin("ada", null);
        assertEquals(401, back(null, queryBack(started), cookieOf(started)).status());
        assertEquals(400, begin("a:b", null).status());
        // anySession: a login that does not reach the callback.
        SignInHandlers any = SignInHandlers.builder(sessions).anySession(true).build();
        assertEquals(
                303,
                any.callback(SignInHandlers.Request.of(
                                "GET", "/callback", queryBack(started), List.of(cookieOf(started)), null))
                        .status());
        assertTrue(sessions.isSignedIn("ada"));
    }

    @Test
    void theAppsOwnBindingReplacesTheCookie() {
        SignInHandlers.Response started = handlers.start(
                new SignInHandlers.Request("GET", "/connect", null, List.of(), "ada", "app-session-7f3a9c2e"));
        assertNull(started.header("Set-Cookie"));
        assertEquals(
                400,
                handlers.callback(new SignInHandlers.Request(
                                "GET", "/callback", queryBack(started), List.of(), "ada", "other"))
                        .status());
        SignInHandlers.Response again = handlers.start(
                new SignInHandlers.Request("GET", "/connect", null, List.of(), "ada", "app-session-7f3a9c2e"));
        assertEquals(
                303,
                handlers.callback(new SignInHandlers.Request(
                                "GET", "/callback", queryBack(again), List.of(), "ada", "app-session-7f3a9c2e"))
                        .status());
    }

    @Test
    void theCookieIsTheSharedOne() throws Exception {
        for (JsonNode v : SessionIdTest.VECTORS.get("bindingCookieValues")) {
            assertEquals(
                    v.get("valid").asBoolean(),
                    SignInHandlers.bindingCookie(v.get("value").asText()));
        }
        for (JsonNode c : SessionIdTest.VECTORS.get("cookies")) {
            Sessions s = Sessions.builder(TokenManager.builder(
                                    tenant.url(), "demo", c.get("redirectUri").asText())
                            .scopes(io.github.tenantintegration.api.Scope.PROFILE_READ)
                            .pendingLifetime(
                                    Duration.ofMillis(c.get("pendingLifetimeMs").asLong())))
                    .build();
            String set = SignInHandlers.builder(s).build().setCookie("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8");
            String expected = c.get("name").asText() + "=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8; Path="
                    + c.get("path").asText() + "; Max-Age=" + c.get("maxAge").asLong() + "; HttpOnly"
                    + (c.get("secure").asBoolean() ? "; Secure" : "") + "; SameSite="
                    + c.get("sameSite").asText();
            assertEquals(expected, set);
        }
    }
}
