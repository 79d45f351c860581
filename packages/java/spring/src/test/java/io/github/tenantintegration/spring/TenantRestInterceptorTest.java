package io.github.tenantintegration.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.FakeTenant;
import io.github.tenantintegration.tokenmanager.MemoryStorage;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/** RestClient and RestTemplate with {@link TenantRestInterceptor}, against the kit's fake tenant. */
class TenantRestInterceptorTest {
    @AutoClose
    final FakeTenant tenant = FakeTenant.start();

    @AutoClose
    final FakeTenant elsewhere = FakeTenant.start();

    private TokenManager signedIn() {
        TokenManager manager = tenant.manager().build();
        FakeTenant.signIn(manager);
        return manager;
    }

    private static RestClient client(TenantRestInterceptor interceptor) {
        return RestClient.builder()
                .requestFactory(new JdkClientHttpRequestFactory())
                .requestInterceptor(interceptor)
                .build();
    }

    /** The status of the answer, whatever it is (retrieve() would throw on a 4xx). */
    private static int status(RestClient.RequestHeadersSpec<?> request) {
        return request.exchange((sent, response) -> response.getStatusCode().value());
    }

    @Test
    void theTokenGoesToTheTenantOnlyWithAcceptJsonUnlessTheRequestHasOne() {
        RestClient client = client(TenantRestInterceptor.of(signedIn()));
        assertEquals(
                "{\"id\":42}",
                client.get().uri(tenant.url() + "/api/v1/auth/user").retrieve().body(String.class));
        client.get()
                .uri(tenant.url() + "/api/v1/auth/user")
                .header("Accept", "text/csv")
                .retrieve()
                .toBodilessEntity();
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
        RestClient client = client(TenantRestInterceptor.of(manager));
        String answer = client.post()
                .uri(tenant.url() + "/api/v1/auth/user")
                .body("{\"note\":\"sent twice\"}")
                .retrieve()
                .body(String.class);
        assertEquals("{\"id\":42}", answer);
        assertEquals(1, tenant.refreshes());
        List<FakeTenant.Request> sent = tenant.requests("/api/v1/auth/user");
        assertEquals(2, sent.size());
        assertEquals("{\"note\":\"sent twice\"}", sent.get(1).body());
        assertEquals("Bearer " + tenant.accessToken, sent.get(1).header("Authorization"));
    }

    @Test
    void aRestTemplateGetsTheSameInterceptor() {
        TokenManager manager = signedIn();
        tenant.accessToken = "revoked by the tenant";
        RestTemplate template = new RestTemplate(new JdkClientHttpRequestFactory());
        template.getInterceptors().add(TenantRestInterceptor.of(manager));
        assertEquals(
                200,
                template.getForEntity(tenant.url() + "/api/v1/auth/user", String.class)
                        .getStatusCode()
                        .value());
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void aManagersFailureIsThrownWithItsCodeAndNothingIsSent() {
        RestClient client = client(TenantRestInterceptor.of(tenant.manager().build()));
        TokenManagerException e = assertThrows(
                TokenManagerException.class,
                () -> client.get()
                        .uri(tenant.url() + "/api/v1/auth/user")
                        .retrieve()
                        .toBodilessEntity());
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
        RestClient client = client(TenantRestInterceptor.of(sessions));
        client.get()
                .uri(tenant.url() + "/api/v1/auth/user")
                .attribute(TenantRestInterceptor.SESSION_ID, "ada@example.org")
                .retrieve()
                .toBodilessEntity();
        assertEquals(
                "Bearer " + adas, tenant.requests("/api/v1/auth/user").get(0).header("Authorization"));
        TokenManagerException none = assertThrows(
                TokenManagerException.class,
                () -> client.get()
                        .uri(tenant.url() + "/api/v1/auth/user")
                        .retrieve()
                        .toBodilessEntity());
        assertEquals(ErrorCode.INVALID_SESSION_ID, none.code());
        assertEquals(1, tenant.requests("/api/v1/auth/user").size(), "nothing sent without a session");
        assertEquals(404, status(client.get().uri(elsewhere.url() + "/anywhere")));
        assertNull(elsewhere.requests("/anywhere").get(0).header("Authorization"));
    }
}
