package io.github.tenantintegration.tenanttest;

/**
 * One call of {@code POST /oauth/token} or {@code /oauth/revoke} as the sandbox logged it (no token).
 *
 * @param seq increasing number, from 1
 * @param time the sandbox's time of the call (ISO 8601)
 * @param endpoint {@code token} or {@code revoke}
 * @param grantType the {@code grant_type} sent, or null
 * @param clientId the {@code client_id} sent, or null
 * @param status the HTTP status of the answer
 * @param outcome {@code ok}, or the RFC 6749 §5.2 error code of the answer
 * @param detail why, in a few words ({@code refresh_token_reused}…), or null
 */
public record SandboxEvent(
        long seq,
        String time,
        String endpoint,
        String grantType,
        String clientId,
        int status,
        String outcome,
        String detail) {}
