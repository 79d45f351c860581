package io.github.tenantintegration.tokenmanager;

/**
 * The session id rule of {@code spec/token-store/README.md} ("The session id", issue 39; Go's {@code
 * sessionid.go}): the app's own id of a user or connection, 1 to 128 characters from {@code A-Z a-z
 * 0-9 - . _ ~ @ + = |}, compared exactly. Any other value is refused with {@code INVALID_SESSION_ID}
 * and the message every kit gives, before anything is read or written.
 */
public final class SessionId {
    /** The longest id, in characters. */
    public static final int MAX_LENGTH = 128;

    private static final String RULE =
            "a session id is 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (hash or encode any other id)";

    private SessionId() {}

    /**
     * Checks {@code id} against the rule.
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}, e.g. {@code invalid session id "a:b": ":"
     *     at character 2 is not allowed; a session id is 1 to 128 characters from …}
     */
    public static void check(String id) {
        String why = problem(id);
        if (why != null) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_SESSION_ID, "invalid session id \"" + shown(id) + "\": " + why + "; " + RULE);
        }
    }

    /** Whether {@code id} follows the rule. */
    public static boolean isValid(String id) {
        return problem(id) == null;
    }

    /** Why {@code id} is refused, or null. Characters are code points (an emoji is one). */
    private static String problem(String id) {
        if (id == null) return "it is not a string";
        if (id.isEmpty()) return "it is empty";
        int[] points = id.codePoints().toArray();
        for (int i = 0; i < points.length; i++) {
            if (!allowed(points[i]))
                return "\"" + escaped(points[i]) + "\" at character " + (i + 1) + " is not allowed";
        }
        if (points.length > MAX_LENGTH) return "it is " + points.length + " characters long";
        return null;
    }

    static boolean allowed(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "-._~@+=|".indexOf(c) >= 0;
    }

    /** The id's first 16 characters, with {@code ...} when it has more, each escaped. */
    private static String shown(String id) {
        if (id == null) return "";
        int[] points = id.codePoints().toArray();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(16, points.length); i++) out.append(escaped(points[i]));
        if (points.length > 16) out.append("...");
        return out.toString();
    }

    /** A character as a message shows it: outside {@code !}..{@code ~}, and a quote or backslash, as its code point in hex. */
    private static String escaped(int c) {
        if (c < '!' || c > '~' || c == '"' || c == '\\')
            return "\\u{" + Integer.toHexString(c).toUpperCase() + "}";
        return new String(Character.toChars(c));
    }
}
