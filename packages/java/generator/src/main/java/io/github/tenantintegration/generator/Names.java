package io.github.tenantintegration.generator;

import java.util.Locale;

/** How the contract's names become Java names, and Java string literals. */
final class Names {
    private Names() {}

    /** {@code client_id} → {@code clientId}, {@code token_type_hint} → {@code tokenTypeHint}. */
    static String camel(String name) {
        StringBuilder out = new StringBuilder();
        boolean upper = false;
        for (char c : name.toCharArray()) {
            if (c == '_' || c == '-' || c == ':' || c == ' ') {
                upper = out.length() > 0;
            } else {
                out.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return out.toString();
    }

    /** {@code profile:read} → {@code PROFILE_READ}, {@code custom-fields:write} → {@code CUSTOM_FIELDS_WRITE}. */
    static String constant(String name) {
        return name.replaceAll("[^A-Za-z0-9]+", "_").toUpperCase(Locale.ROOT);
    }

    /** {@code #/components/schemas/AccessToken} → {@code AccessToken}. */
    static String refName(String ref) {
        String prefix = "#/components/schemas/";
        if (!ref.startsWith(prefix)) throw new IllegalArgumentException("not a schema reference: " + ref);
        return ref.substring(prefix.length());
    }

    /** {@code text} as a Java string literal: quotes, backslashes, control and non-ASCII characters escaped. */
    static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                default -> {
                    // Octal for control characters: a \\u escape of a line break would end the literal.
                    if (c < 0x20) out.append(String.format("\\%03o", (int) c));
                    else if (c > 0x7e) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        return out.append('"').toString();
    }
}
