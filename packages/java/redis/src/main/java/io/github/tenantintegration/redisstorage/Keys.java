package io.github.tenantintegration.redisstorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Redis keys of the manager's records, shared by every kit ({@code spec/token-store/README.md}):
 * the session part of a name is wrapped in a hash tag, so that the keys of one session (tokens,
 * pending, intent, lock) stay in one slot of a Redis Cluster. The same keys on a single server, so
 * that a deployment moves between the two unchanged.
 */
public final class Keys {
    private static final String NAMESPACE = "tenant-integration:";
    private static final Set<String> KINDS = Set.of("tokens", "pending", "intent", "lock");
    private static final Pattern PENDING_BY_STATE = Pattern.compile(":pending:[0-9a-f]{32}$");

    private Keys() {}

    /**
     * The Redis key of a storage or lock name: for the manager's names ({@code
     * tenant-integration:<origin>:<clientId>:<kind>}, kind one of tokens, pending, intent, lock) {@code
     * prefix + "tenant-integration:{<origin>:<clientId>}:<kind>"}; a session's ({@code
     * tenant-integration:<origin>:<clientId>:<session>:<kind>}) {@code
     * prefix + "tenant-integration:{<origin>:<clientId>:<session>}:<kind>"}; a pending sign-in's by state
     * ({@code tenant-integration:<origin>:<clientId>:pending:<32 hex>}) {@code
     * prefix + "tenant-integration:{<origin>:<clientId>}:pending:<32 hex>"}; for any other name {@code
     * prefix + name} ({@code spec/token-store/README.md}, "Names and keys").
     *
     * <pre>{@code
     * Keys.key("app:", "tenant-integration:https://acme.tenant.test:demo:tokens")
     * // "app:tenant-integration:{https://acme.tenant.test:demo}:tokens"
     * }</pre>
     */
    public static String key(String prefix, String name) {
        if (!name.startsWith(NAMESPACE)) return prefix + name;
        String rest = name.substring(NAMESPACE.length());
        Matcher pending = PENDING_BY_STATE.matcher(rest);
        if (pending.find() && pending.start() > 0) {
            return prefix + NAMESPACE + "{" + rest.substring(0, pending.start()) + "}"
                    + rest.substring(pending.start());
        }
        int last = rest.lastIndexOf(':');
        if (last <= 0 || !KINDS.contains(rest.substring(last + 1))) return prefix + name;
        return prefix + NAMESPACE + "{" + rest.substring(0, last) + "}" + rest.substring(last);
    }

    /** The channel a lock's release is announced on: the lock's Redis key followed by {@code :released}. */
    public static String releasedChannel(String lockKey) {
        return lockKey + ":released";
    }

    /**
     * Refuses a prefix holding a brace: Redis Cluster hashes the first {@code {…}} of a key, so a brace
     * in the prefix would take the place of the session's hash tag.
     */
    static void checkPrefix(String prefix) {
        if (prefix == null || prefix.contains("{") || prefix.contains("}")) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_OPTIONS,
                    "prefix: \"" + prefix + "\" holds { or }: Redis Cluster would hash "
                            + "the prefix's braces instead of the session's hash tag, and the keys of one session could land on different nodes");
        }
    }
}
