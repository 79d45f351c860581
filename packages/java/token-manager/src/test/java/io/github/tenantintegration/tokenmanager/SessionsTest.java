package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.filestorage.FileStorage;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A server acting for many users: {@link Sessions} (spec/token-store/README.md, "Sessions", issue 39). */
class SessionsTest {
    private FakeTenant tenant;
    private MemoryStorage storage;
    private Sessions sessions;

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        tenant = new FakeTenant();
        storage = new MemoryStorage();
        sessions = Sessions.builder(tenant.manager().storage(storage)).build();
    }

    @AfterEach
    void stop() {
        tenant.close();
    }

    private static String state(AuthorizationRequest request) {
        for (String pair : request.url().getRawQuery().split("&"))
            if (pair.startsWith("state=")) return pair.substring(6);
        throw new AssertionError("no state");
    }

    private String callback(Sessions.Started started) {
        return sessions.redirectUri() + "?code=code_abcdefghij&state=" + state(started.request());
    }

    private String tokensOf(String id) {
        return storage.get("tenant-integration:" + tenant.url() + ":demo:" + id + ":tokens")
                .orElse(null);
    }

    @Test
    void eachSessionIsStoredUnderItsOwnIdAndNeverServesAnothersToken() throws Exception {
        Sessions.Started ada = sessions.beginSignIn("ada@example.org", null);
        Sessions.Started bob = sessions.beginSignIn("42", null);
        // Completed in the reverse order: each callback finds its own sign-in by its state.
        Sessions.SignedIn second = sessions.completeSignIn(new Sessions.Callback(callback(bob), bob.binding(), "42"));
        Sessions.SignedIn first =
                sessions.completeSignIn(new Sessions.Callback(callback(ada), ada.binding(), "ada@example.org"));
        assertEquals("42", second.sessionId());
        assertEquals("ada@example.org", first.sessionId());
        assertTrue(tokensOf("42").contains("at_access_1_"));
        assertTrue(tokensOf("ada@example.org").contains("at_access_2_"));
        assertEquals("at_access_1_abcdefgh", sessions.accessToken("42"));
        assertEquals("at_access_2_abcdefgh", sessions.accessToken("ada@example.org"));
        assertFalse(sessions.isSignedIn("carol"));
        assertThrows(TokenManagerException.class, () -> sessions.accessToken("carol"));
        // The session's client sends that session's token (the fake knows the latest one: ada's).
        HttpResponse<String> me = sessions.httpClient("ada@example.org")
                .send(
                        HttpRequest.newBuilder(URI.create(tenant.url() + "/api/v1/auth/user"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, me.statusCode());
        assertEquals(
                "Bearer at_access_2_abcdefgh",
                tenant.requests("/api/v1/auth/user").get(0).header("Authorization"));
        sessions.signOut("42");
        assertFalse(sessions.isSignedIn("42"));
        assertTrue(sessions.isSignedIn("ada@example.org"));
    }

    @Test
    void twoTabsOfOneUserBothComplete() {
        Sessions.Started tab1 = sessions.beginSignIn("42", null);
        Sessions.Started tab2 = sessions.beginSignIn("42", tab1.binding());
        assertEquals(tab1.binding(), tab2.binding());
        sessions.completeSignIn(new Sessions.Callback(callback(tab1), tab1.binding(), null));
        sessions.completeSignIn(new Sessions.Callback(callback(tab2), tab2.binding(), null));
        assertEquals(2, tenant.requests("/oauth/token").size());
        // Each sign-in is used once.
        TokenManagerException again = assertThrows(
                TokenManagerException.class,
                () -> sessions.completeSignIn(new Sessions.Callback(callback(tab1), tab1.binding(), null)));
        assertEquals(ErrorCode.NO_PENDING_SIGN_IN, again.code());
    }

    @Test
    void aCallbackFromAnotherBrowserIsRefusedBeforeAnyExchange() {
        Sessions.Started attacker = sessions.beginSignIn("mallory", null);
        TokenManagerException e = assertThrows(
                TokenManagerException.class,
                () -> sessions.completeSignIn(new Sessions.Callback(callback(attacker), Binding.random(), null)));
        assertEquals(ErrorCode.STATE_MISMATCH, e.code());
        assertEquals("STATE_MISMATCH: the sign-in was started in another browser", e.getMessage());
        TokenManagerException none = assertThrows(
                TokenManagerException.class,
                () -> sessions.completeSignIn(
                        new Sessions.Callback(callback(sessions.beginSignIn("mallory", null)), null, null)));
        assertEquals(ErrorCode.STATE_MISMATCH, none.code());
        assertEquals(0, tenant.requests("/oauth/token").size());
    }

    @Test
    void aSignInBegunForAnotherSessionIsRefused() {
        Sessions.Started started = sessions.beginSignIn("42", "app-session-7f3a9c2e");
        TokenManagerException e = assertThrows(
                TokenManagerException.class,
                () -> sessions.completeSignIn(new Sessions.Callback(callback(started), "app-session-7f3a9c2e", "43")));
        assertEquals("STATE_MISMATCH: the sign-in was started for another session", e.getMessage());
        // A manager without a session id takes none of a server's sign-ins, nor the reverse.
        TokenManager single = tenant.manager().storage(storage).build();
        Sessions.Started other = sessions.beginSignIn("42", null);
        assertEquals(
                ErrorCode.STATE_MISMATCH,
                assertThrows(TokenManagerException.class, () -> single.completeAuthorization(callback(other)))
                        .code());
        AuthorizationRequest own = single.beginAuthorization();
        String url = single.redirectUri() + "?code=code_abcdefghij&state=" + state(own);
        assertEquals(
                ErrorCode.STATE_MISMATCH,
                assertThrows(
                                TokenManagerException.class,
                                () -> sessions.completeSignIn(new Sessions.Callback(url, null, null)))
                        .code());
        assertEquals(0, tenant.requests("/oauth/token").size());
    }

    @Test
    void invalidIdsAreRefusedOnEveryCall() {
        for (Runnable call : List.<Runnable>of(
                () -> sessions.manager("a:b"),
                () -> sessions.beginSignIn("{42}", null),
                () -> sessions.httpClient(""),
                () -> sessions.signOut("a b"),
                () -> sessions.completeSignIn(
                        new Sessions.Callback("http://127.0.0.1:53682/callback?state=x", null, "a/b")))) {
            assertEquals(
                    ErrorCode.INVALID_SESSION_ID,
                    assertThrows(TokenManagerException.class, call::run).code());
        }
        assertTrue(storage.toString().equals("MemoryStorage[]"));
        assertEquals(
                ErrorCode.INVALID_OPTIONS,
                assertThrows(
                                TokenManagerException.class,
                                () -> Sessions.builder(tenant.manager().sessionId("42"))
                                        .build())
                        .code());
    }

    @Test
    void managersAreCachedPerSessionAndDroppedPastTheBoundOrWhenIdle() throws Exception {
        Sessions bounded = Sessions.builder(tenant.manager().storage(storage))
                .maxCached(2)
                .maxIdle(Duration.ofMillis(200))
                .build();
        TokenManager a = bounded.manager("a");
        assertSame(a, bounded.manager("a"));
        bounded.manager("b");
        bounded.manager("c");
        assertEquals(2, bounded.cached());
        assertNotSame(a, bounded.manager("a")); // "a" was the least recently used: dropped, made again
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (bounded.cached() > 0 && System.nanoTime() < deadline) Thread.sleep(20);
        assertEquals(0, bounded.cached());
    }

    @Test
    void sessionsOfOneTokenFileHaveLocksOfTheirOwn() throws Exception {
        Path file = dir.resolve("tokens.json");
        FileStorage shared =
                FileStorage.builder(file).lockTimeout(Duration.ofMillis(300)).build();
        TestClock clock = new TestClock();
        Sessions onFile =
                Sessions.builder(tenant.manager().clock(clock).storage(shared)).build();
        for (String id : List.of("42", "43")) {
            Sessions.Started started = onFile.beginSignIn(id, null);
            onFile.completeSignIn(new Sessions.Callback(
                    onFile.redirectUri() + "?code=code_abcdefghij&state=" + state(started.request()),
                    started.binding(),
                    id));
        }
        assertFalse(Files.readString(file).contains(":pending:"), "each pending sign-in was taken");
        TokenManager m42 = onFile.manager("42");
        Path lock = shared.sessionLockDirectory(m42.lockName);
        assertEquals(file + "." + FileStorageHash.of(m42.lockName) + ".refresh.lock", lock.toString());
        // Another live process of this host holds session 42's refresh lock: 42 waits, 43 refreshes.
        Files.createDirectory(lock);
        Files.writeString(
                lock.resolve("owner"),
                "{\"pid\":" + ProcessHandle.current().pid() + ",\"host\":\""
                        + io.github.tenantintegration.internal.ProcessIdentity.host()
                        + "\",\"id\":\"0123456789abcdef0123456789abcdef\",\"since\":1}");
        clock.advance(Duration.ofMinutes(16));
        assertEquals(
                ErrorCode.LOCK_TIMEOUT,
                assertThrows(TokenManagerException.class, () -> onFile.accessToken("42"))
                        .code());
        assertEquals("at_access_3_abcdefgh", onFile.accessToken("43"));
        assertEquals(1, tenant.refreshes());
    }

    /** The lock directory's hash, computed here from the rule: SHA-256 of the lock name, 16 hex digits. */
    private static final class FileStorageHash {
        static String of(String lockName) throws Exception {
            byte[] sum = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(lockName.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(sum).substring(0, 16);
        }
    }
}
