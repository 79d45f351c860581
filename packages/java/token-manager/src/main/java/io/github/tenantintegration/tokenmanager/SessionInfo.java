package io.github.tenantintegration.tokenmanager;

import java.time.Instant;

/**
 * A session, without any token: when its access token expires and what scope was granted.
 *
 * @param expiresAt when the access token expires (the local receive time plus {@code expires_in},
 *     RFC 6749 §5.1), on the manager's clock
 * @param scope the granted scope as the tenant returned it, or null when it returned none (the
 *     scopes asked for were granted, RFC 6749 §5.1)
 */
public record SessionInfo(Instant expiresAt, String scope) {}
