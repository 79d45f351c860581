package io.github.tenantintegration.tokenmanager;

/**
 * The stable code of every {@link TokenManagerException}: the same strings as the TypeScript, Python
 * and Go kits (the contract's "Error code catalogue"). Branch on it, never on a message.
 */
public enum ErrorCode {
    /** An option is invalid; the message names it. */
    INVALID_OPTIONS,
    /** A PKCE verifier is not 43–128 characters of {@code A-Z a-z 0-9 - . _ ~} (RFC 7636 §4.1). */
    INVALID_VERIFIER,
    /**
     * A session id that does not follow the rule of {@code spec/token-store} (1 to 128 characters from
     * {@code A-Z a-z 0-9 - . _ ~ @ + = |}); nothing was read or written.
     */
    INVALID_SESSION_ID,
    /** {@code completeAuthorization} found no pending sign-in (never begun, used, cleared). */
    NO_PENDING_SIGN_IN,
    /** The callback has no {@code state}; nothing was sent. */
    STATE_MISSING,
    /** The callback's {@code state} differs from the stored one; nothing was sent (RFC 6749 §10.12). */
    STATE_MISMATCH,
    /** The pending sign-in outlived its lifetime. */
    STATE_EXPIRED,
    /** The callback is not at the redirect URI, repeats a parameter or has no {@code code}. */
    INVALID_CALLBACK,
    /** The callback carries {@code error}, such as {@code access_denied} (RFC 6749 §4.1.2.1). */
    AUTHORIZATION_DENIED,
    /** The loopback sign-in's port is taken by another program. */
    CALLBACK_PORT_IN_USE,
    /** The tenant showed its error page for the authorize request: redirect URI or client id not registered. */
    REDIRECT_URI_REFUSED,
    /** No callback reached the loopback receiver in time. */
    CALLBACK_TIMEOUT,
    /** The token or revocation endpoint answered an OAuth error (RFC 6749 §5.2). */
    OAUTH_ERROR,
    /**
     * A refresh came back {@code invalid_grant}: the tokens are cleared, sign in again. Assumption (not in
     * the service description, which shows no OAuth error code): the tenant answers a refused refresh
     * token so (RFC 6749 §5.2).
     */
    SESSION_ENDED,
    /** No answer, a timeout, 429 or 5xx on a token request; the tokens are kept. */
    TRANSIENT,
    /** An answer that is not a valid token response; nothing was stored. */
    INVALID_RESPONSE,
    /** There are no tokens: sign in first. */
    NOT_SIGNED_IN,
    /** The storage failed; the cause is its error. */
    STORAGE_FAILED,
    /** A lock stayed held for its whole bounded wait. */
    LOCK_TIMEOUT,
    /** Taking or checking a Redis lock failed: refused, closed or no answer. */
    LOCK_UNAVAILABLE,
    /** The token file was not a JSON object of strings; moved aside, the storage is empty. */
    FILE_CORRUPT,
    /** The token file is not a regular file, or others may read it. */
    FILE_UNSAFE,
    /** Reading, writing or locking the token file failed (read-only, full disk). */
    IO_FAILED,
    /** A Redis command failed (unreachable, connection lost, an error reply). */
    COMMAND_FAILED,
    /** Redis answered something other than what the storage expected. */
    UNEXPECTED_REPLY,
    /** Fewer replicas than asked acknowledged a write in time. */
    REPLICATION_TIMEOUT,
    /** The lock's lease ran out while its task ran. */
    LEASE_LOST,
    /** The PostgreSQL table of the records does not exist: apply its schema, or call {@code ensureSchema}. */
    SCHEMA_MISSING,
    /** The PostgreSQL table is not this version's (another application's, or another version): nothing is written. */
    SCHEMA_MISMATCH,
    /** The PostgreSQL server takes no writes (a hot standby, or read-only transactions): give the primary. */
    READ_ONLY,
    /** A name that is not a record of the tenant and client the PostgreSQL storage was made for. */
    UNKNOWN_NAME,
    /** The calling thread was interrupted while it waited. */
    ABORTED
}
