package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

class BearerHttpClientTest {
    @Test
    void theTokenGoesToTheTenantWithAcceptJson() throws Exception {
        try (FakeTenant tenant = new FakeTenant()) {
            TokenManager manager = tenant.manager().build();
            FakeTenant.signIn(manager);
            HttpClient client = manager.httpClient();
            HttpResponse<String> user = client.send(
                    HttpRequest.newBuilder(URI.create(tenant.url() + "/api/v1/auth/user"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, user.statusCode());
            FakeTenant.Request sent = tenant.requests("/api/v1/auth/user").get(0);
            assertEquals("Bearer " + tenant.accessToken, sent.header("Authorization"));
            assertEquals("application/json", sent.header("Accept"));
            client.send(
                    HttpRequest.newBuilder(URI.create(tenant.url() + "/api/v1/auth/user"))
                            .header("Accept", "text/csv")
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
            assertEquals("text/csv", tenant.requests("/api/v1/auth/user").get(1).header("Accept"));
        }
    }

    @Test
    void aRequestForAnotherOriginGoesWithoutTheToken() throws Exception {
        try (FakeTenant tenant = new FakeTenant();
                FakeTenant elsewhere = new FakeTenant()) {
            TokenManager manager = tenant.manager().build();
            FakeTenant.signIn(manager);
            manager.httpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(elsewhere.url() + "/api/v1/auth/user"))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());
            assertNull(elsewhere.requests("/api/v1/auth/user").get(0).header("Authorization"));
        }
    }

    @Test
    void a401RefreshesOnceAndSendsAgain() throws Exception {
        try (FakeTenant tenant = new FakeTenant()) {
            TokenManager manager = tenant.manager().build();
            FakeTenant.signIn(manager);
            manager.accessToken();
            tenant.accessToken = "revoked by the tenant";
            HttpClient client = manager.httpClient();
            assertEquals(
                    200,
                    client.send(
                                    HttpRequest.newBuilder(URI.create(tenant.url() + "/api/v1/auth/user"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode());
            assertEquals(1, tenant.refreshes());
            assertEquals(2, tenant.requests("/api/v1/auth/user").size());
            assertEquals(
                    200,
                    client.sendAsync(
                                    HttpRequest.newBuilder(URI.create(tenant.url() + "/api/v1/auth/user"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .get()
                            .statusCode());
        }
    }

    @Test
    void aClientThatFollowsRedirectsIsRefused() throws Exception {
        try (FakeTenant tenant = new FakeTenant()) {
            TokenManager manager = tenant.manager().build();
            assertEquals(
                    ErrorCode.INVALID_OPTIONS,
                    assertThrows(
                                    TokenManagerException.class,
                                    () -> manager.httpClient(HttpClient.newBuilder()
                                            .followRedirects(HttpClient.Redirect.NORMAL)
                                            .build()))
                            .code());
        }
    }
}
