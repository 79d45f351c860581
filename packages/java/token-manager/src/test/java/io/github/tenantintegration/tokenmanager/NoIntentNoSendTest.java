package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * No intent, no send (the lead's decision D6, issue 42; {@code spec/token-store/README.md}, step 4):
 * a refresh whose intent the storage did not take is not sent.
 */
class NoIntentNoSendTest {
    private static final String MESSAGE = "STORAGE_FAILED: the refresh intent could not be written"
            + " (SET %s failed (test)), so the refresh was not sent; the stored tokens are unchanged and the next"
            + " call tries again";

    @AutoClose
    private final FakeTenant tenant = FakeTenant.start();

    private final TestClock clock = new TestClock();
    private final SharedMemory storage = new SharedMemory();

    private TokenManager manager() {
        return tenant.manager().clock(clock).storage(storage).build();
    }

    @Test
    void anUnwritableIntentFailsTheRefreshWithStorageFailedAndNothingIsSent() {
        TokenManager manager = manager();
        FakeTenant.signIn(manager);
        String intentKey = storage.key("intent");
        String before = storage.data.get(storage.key("tokens"));
        storage.failSet = intentKey::equals;
        clock.advance(Duration.ofMinutes(16));
        TokenManagerException e = assertThrows(TokenManagerException.class, manager::accessToken);
        assertEquals(ErrorCode.STORAGE_FAILED, e.code());
        assertEquals(String.format(MESSAGE, intentKey), e.getMessage());
        assertTrue(e.getCause() instanceof StorageException, "the storage's error is the cause");
        assertEquals(0, tenant.refreshes(), "a refresh request reached the tenant without an intent");
        assertEquals(before, storage.data.get(storage.key("tokens")), "the stored tokens changed");
        assertFalse(storage.data.containsKey(intentKey));
        // The error released the lock: the next call, the storage writing again, refreshes once.
        storage.failSet = key -> false;
        String token = manager.accessToken();
        assertEquals(tenant.accessToken, token);
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void theIntentAndThenTheTokensUnwritableNoOtherProcessPresentsARotatedAwayToken() {
        TokenManager first = manager();
        FakeTenant.signIn(first);
        storage.failSet = key -> key.endsWith(":intent") || key.endsWith(":tokens");
        clock.advance(Duration.ofMinutes(16));
        TokenManagerException e = assertThrows(TokenManagerException.class, first::accessToken);
        assertEquals(ErrorCode.STORAGE_FAILED, e.code());
        // The first process gives up (or dies); the storage answers again; another process calls.
        storage.failSet = key -> false;
        TokenManager second = manager();
        String token = second.accessToken();
        assertEquals(tenant.accessToken, token, "the other process lost the session");
        Map<String, Long> presented = tenant.requests("/oauth/token").stream()
                .map(FakeTenant.Request::body)
                .filter(body -> body.contains("\"grant_type\":\"refresh_token\""))
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
        assertTrue(
                presented.values().stream().allMatch(n -> n == 1),
                "a refresh token was presented twice: the tenant revokes the family");
        assertEquals(1, tenant.refreshes());
    }
}
