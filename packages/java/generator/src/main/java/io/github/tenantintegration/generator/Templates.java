package io.github.tenantintegration.generator;

/** The generated files that do not depend on the contract. */
final class Templates {
    private Templates() {}

    static final String PACKAGE_INFO = """
            /**
             * The types of the Tenant Integration Service's contract ({@code spec/openapi.yaml}): a record per
             * request and response body, {@link io.github.tenantintegration.api.Scope} (the service's scopes)
             * and {@link io.github.tenantintegration.api.Schemas} (the constraints a type cannot say).
             *
             * <p>Where the service description leaves something open, the contract follows the governing RFC
             * and says so: those assumptions are part of each type's documentation, after the words
             * "Assumption (not in the service description):". Records holding a token, a code or a verifier
             * print them as {@code [redacted]}.
             */
            package io.github.tenantintegration.api;
            """;

    static final String JSON_TEXT = """
            package io.github.tenantintegration.api;

            /**
             * Writes one JSON object as the TypeScript kit's {@code JSON.stringify} does: members in the given
             * order, no spaces, no HTML escaping; a null member is left out. For the records' {@code toJson()}.
             */
            final class JsonText {
                private final StringBuilder out = new StringBuilder("{");

                void member(String name, Object value) {
                    if (value == null) return;
                    if (out.length() > 1) out.append(',');
                    quote(name);
                    out.append(':');
                    if (value instanceof String text) quote(text);
                    else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) out.append(value);
                    else if (value instanceof Double number) out.append(number(number));
                    else throw new IllegalArgumentException("no JSON form for a " + value.getClass().getName());
                }

                String end() {
                    return out.append('}').toString();
                }

                private static String number(double value) {
                    if (!Double.isFinite(value)) throw new IllegalArgumentException("JSON has no " + value);
                    if (value == Math.rint(value) && Math.abs(value) < 1e15) return Long.toString((long) value);
                    return Double.toString(value);
                }

                private void quote(String text) {
                    out.append('"');
                    for (int i = 0; i < text.length(); i++) {
                        char c = text.charAt(i);
                        switch (c) {
                            case '"' -> out.append("\\\\\\"");
                            case '\\\\' -> out.append("\\\\\\\\");
                            case '\\n' -> out.append("\\\\n");
                            case '\\r' -> out.append("\\\\r");
                            case '\\t' -> out.append("\\\\t");
                            case '\\b' -> out.append("\\\\b");
                            case '\\f' -> out.append("\\\\f");
                            default -> {
                                boolean lone = Character.isSurrogate(c)
                                        && !(Character.isHighSurrogate(c) && i + 1 < text.length()
                                                && Character.isLowSurrogate(text.charAt(i + 1)))
                                        && !(Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(text.charAt(i - 1)));
                                if (c < 0x20 || lone) out.append(String.format("\\\\u%04x", (int) c));
                                else out.append(c);
                            }
                        }
                    }
                    out.append('"');
                }
            }
            """;
}
