package io.github.tenantintegration.spring.boot;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.spring.TenantRestInterceptor;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Storage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.util.Arrays;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot's auto-configuration of the kit: with {@code tenant-integration.base-url} set, a {@link
 * TokenManager} bean built from the {@link TenantIntegrationProperties} (on the application's {@link
 * Storage} bean if it has one, else on {@code tenant-integration.token-file}, else in memory; closed with
 * the context), unless the application defines its own; and a {@code RestClientCustomizer} that adds
 * {@link TenantRestInterceptor} for that manager to every {@code RestClient.Builder} Boot gives (the token
 * goes to the tenant's origin only).
 */
@AutoConfiguration
@ConditionalOnClass(TokenManager.class)
@ConditionalOnProperty(prefix = "tenant-integration", name = "base-url")
@EnableConfigurationProperties(TenantIntegrationProperties.class)
public class TenantIntegrationAutoConfiguration {
    /**
     * The manager of the properties.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} (the context does not start) for a missing or
     *     invalid property, naming it
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public TokenManager tenantIntegrationTokenManager(
            TenantIntegrationProperties properties, ObjectProvider<Storage> storages) {
        TokenManager.Builder builder = TokenManager.builder(
                        required(properties.baseUrl(), "base-url"),
                        required(properties.clientId(), "client-id"),
                        required(properties.redirectUri(), "redirect-uri"))
                .scopes(scopes(properties.scopes()));
        Storage storage = storages.getIfUnique(
                () -> properties.tokenFile() == null ? null : FileStorage.of(properties.tokenFile()));
        return storage == null ? builder.build() : builder.storage(storage).build();
    }

    private static String required(String value, String name) {
        if (value != null && !value.isBlank()) return value;
        throw new TokenManagerException(
                ErrorCode.INVALID_OPTIONS,
                "tenant-integration." + name + " is not set: base-url, client-id and redirect-uri are all needed");
    }

    private static List<Scope> scopes(List<String> values) {
        if (values == null || values.isEmpty()) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_OPTIONS,
                    "tenant-integration.scopes is not set: give at least one, e.g. profile:read");
        }
        return values.stream()
                .map(value -> Scope.find(value.trim())
                        .orElseThrow(() -> new TokenManagerException(
                                ErrorCode.INVALID_OPTIONS,
                                "tenant-integration.scopes: \"" + value + "\" is not a scope of the contract ("
                                        + Arrays.stream(Scope.values())
                                                .map(Scope::value)
                                                .toList() + ")")))
                .toList();
    }

    /**
     * The RestClient customizer, when Boot's RestClient support is there, for the context's manager (this
     * configuration's, or the application's own).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RestClientCustomizer.class)
    static class RestClientConfiguration {
        /** Adds the manager's {@link TenantRestInterceptor} to every {@code RestClient.Builder} of the context. */
        @Bean
        RestClientCustomizer tenantIntegrationRestClientCustomizer(TokenManager manager) {
            return builder -> builder.requestInterceptor(TenantRestInterceptor.of(manager));
        }
    }
}
