package io.github.tenantintegration.tenanttest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What the storages' tests of token managers sharing one storage assert, written once: a test fixture
 * (src/testFixtures) compiled with the tests of the Redis and PostgreSQL modules, never published.
 */
public final class Fleets {
    private Fleets() {}

    /**
     * Managers on one storage (the first signed in, on the sandbox's clock) past the access token's 15
     * minutes, all asking at once: every one gets the same token, the sandbox saw one refresh, and no
     * refresh token was presented twice.
     */
    public static void oneRefreshAfterExpiry(List<TestTenant> tenants) throws Exception {
        tenants.get(0).advance(Duration.ofMinutes(16));
        ExecutorService pool = Executors.newFixedThreadPool(tenants.size());
        try {
            List<Future<String>> calls = new ArrayList<>();
            for (TestTenant tenant : tenants)
                calls.add(pool.submit(() -> tenant.manager().accessToken()));
            String first = calls.get(0).get();
            for (Future<String> call : calls) assertEquals(first, call.get());
        } finally {
            pool.shutdown();
        }
        assertEquals(1, tenants.get(0).refreshCount());
        assertTrue(tenants.get(0).ledger().noTokenPresentedTwice());
    }
}
