package io.github.tenantintegration.tenanttest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tokenmanager.TokenManager;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("process")
@ExtendWith(TenantExtension.class)
class TenantExtensionTest {
    @Test
    void aTestGetsASignedInTenantOnTheSandboxsClock(TestTenant tenant, TokenManager manager, Sandbox sandbox) {
        assertSame(tenant.manager(), manager);
        assertSame(tenant.sandbox(), sandbox);
        assertTrue(manager.isSignedIn());
        assertEquals(200, tenant.get("/api/v1/auth/user").statusCode());
        assertEquals(0, tenant.refreshCount());
    }

    @Test
    void afterTheAccessTokenExpiresTheClientRefreshesOnce(TestTenant tenant) {
        tenant.advance(Duration.ofMinutes(16));
        assertEquals(200, tenant.get("/api/v1/auth/user").statusCode());
        assertEquals(200, tenant.get("/api/v1/auth/user").statusCode());
        assertEquals(1, tenant.refreshCount());
        assertTrue(tenant.ledger().noTokenPresentedTwice());
    }
}
