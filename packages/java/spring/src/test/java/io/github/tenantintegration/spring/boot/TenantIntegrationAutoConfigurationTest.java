package io.github.tenantintegration.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.FakeTenant;
import io.github.tenantintegration.tokenmanager.MemoryStorage;
import io.github.tenantintegration.tokenmanager.Storage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;

/** Spring Boot contexts booted with the kit's auto-configuration (from its AutoConfiguration.imports). */
class TenantIntegrationAutoConfigurationTest {
    @AutoClose
    final FakeTenant tenant = FakeTenant.start();

    @TempDir
    Path dir;

    /** Boot's RestClient support and every auto-configuration the module's imports file names. */
    private final ApplicationContextRunner boot = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RestClientAutoConfiguration.class))
            .withConfiguration(AutoConfigurations.of(imported()));

    private static Class<?>[] imported() {
        try (var in = TenantIntegrationAutoConfigurationTest.class.getResourceAsStream(
                "/META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports")) {
            List<Class<?>> classes = new java.util.ArrayList<>();
            for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) classes.add(Class.forName(line.trim()));
            }
            return classes.toArray(Class<?>[]::new);
        } catch (Exception e) {
            throw new AssertionError("the module's AutoConfiguration.imports names loadable classes", e);
        }
    }

    private String[] properties() {
        return new String[] {
            "tenant-integration.base-url=" + tenant.url(),
            "tenant-integration.client-id=demo",
            "tenant-integration.redirect-uri=http://127.0.0.1:53682/callback",
            "tenant-integration.scopes=profile:read",
        };
    }

    @Test
    void thePropertiesMakeAManagerAndEveryRestClientOfTheContextCarriesItsToken() {
        boot.withPropertyValues(properties())
                .withPropertyValues("tenant-integration.token-file=" + dir.resolve("tokens.json"))
                .run(context -> {
                    TokenManager manager = context.getBean(TokenManager.class);
                    assertEquals(tenant.url(), manager.baseUrl());
                    assertEquals("demo", manager.clientId());
                    assertEquals(List.of(Scope.PROFILE_READ), manager.scopes());
                    FakeTenant.signIn(manager);
                    assertTrue(Files.exists(dir.resolve("tokens.json")), "the tokens are in the token file");
                    RestClient client =
                            context.getBean(RestClient.Builder.class).build();
                    assertEquals(
                            "{\"id\":42}",
                            client.get()
                                    .uri(tenant.url() + "/api/v1/auth/user")
                                    .retrieve()
                                    .body(String.class));
                    assertEquals(
                            "Bearer " + tenant.accessToken,
                            tenant.requests("/api/v1/auth/user").get(0).header("Authorization"));
                });
    }

    @Test
    void theApplicationsStorageAndManagerBeansComeFirst() {
        MemoryStorage storage = new MemoryStorage();
        boot.withPropertyValues(properties())
                .withBean(Storage.class, () -> storage)
                .run(context -> {
                    FakeTenant.signIn(context.getBean(TokenManager.class));
                    assertTrue(
                            storage.get("tenant-integration:" + tenant.url() + ":demo:tokens")
                                    .isPresent(),
                            "the tokens are in the application's storage");
                });
        TokenManager own = tenant.manager().build();
        boot.withPropertyValues(properties())
                .withBean(TokenManager.class, () -> own)
                .run(context -> assertSame(own, context.getBean(TokenManager.class)));
    }

    @Test
    void withoutABaseUrlNothingIsConfiguredAndAMissingPropertyStopsTheContextWithItsName() {
        boot.run(
                context -> assertTrue(context.getBeansOfType(TokenManager.class).isEmpty()));
        boot.withPropertyValues("tenant-integration.base-url=" + tenant.url()).run(context -> {
            Throwable failure = context.getStartupFailure();
            while (failure != null && !(failure instanceof TokenManagerException)) failure = failure.getCause();
            TokenManagerException e = (TokenManagerException) failure;
            assertEquals(ErrorCode.INVALID_OPTIONS, e.code());
            assertTrue(e.getMessage().contains("tenant-integration.client-id"), e.getMessage());
        });
    }
}
