package io.github.tenantintegration.spring.boot;

import java.nio.file.Path;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code tenant-integration.*} properties of a Spring Boot application, from which {@link
 * TenantIntegrationAutoConfiguration} builds the {@code TokenManager} bean:
 *
 * <pre>
 * tenant-integration.base-url=https://acme.tenant.test
 * tenant-integration.client-id=my-client
 * tenant-integration.redirect-uri=https://app.example/tenant/callback
 * tenant-integration.scopes=profile:read
 * tenant-integration.token-file=/var/lib/my-app/tokens.json
 * </pre>
 *
 * @param baseUrl the tenant's origin (https, or http to a loopback host; no path)
 * @param clientId the OAuth client identifier
 * @param redirectUri the redirect URI registered for the client, exactly as registered
 * @param scopes the scopes to ask for, as the contract writes them ({@code profile:read}); at least one
 * @param tokenFile the token file shared by the processes of this machine ({@code FileStorage}); none, and
 *     no {@code Storage} bean: the tokens live in this process's memory
 */
@ConfigurationProperties("tenant-integration")
public record TenantIntegrationProperties(
        String baseUrl, String clientId, String redirectUri, List<String> scopes, Path tokenFile) {}
