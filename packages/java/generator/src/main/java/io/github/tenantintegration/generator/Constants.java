package io.github.tenantintegration.generator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes what is not a record: the {@code Scope} enum (the scopes of the contract's oauth2 security
 * scheme) and {@code Schemas} (the constraints of the string and number schemas: patterns, lengths,
 * lifetimes), which the token manager checks at run time.
 */
final class Constants {
    private final Map<String, Object> doc;
    private final Javadoc javadoc;

    Constants(Map<String, Object> doc, Javadoc javadoc) {
        this.doc = doc;
        this.javadoc = javadoc;
    }

    /** Scope.java: one constant per scope, in the contract's order. */
    String scopes() {
        Map<String, Object> schemes =
                Generate.object(Generate.object(doc.get("components")).get("securitySchemes"));
        List<Map.Entry<String, Object>> oauth = schemes.entrySet().stream()
                .filter(e -> "oauth2".equals(Generate.object(e.getValue()).get("type")))
                .toList();
        if (oauth.size() != 1)
            throw new IllegalStateException("expected one oauth2 security scheme, found " + oauth.size());
        Map<String, Object> flows =
                Generate.object(Generate.object(oauth.get(0).getValue()).get("flows"));
        Map<String, Object> scopes =
                Generate.object(Generate.object(flows.get("authorizationCode")).get("scopes"));
        if (scopes.isEmpty()) throw new IllegalStateException("the security scheme lists no scopes");
        StringBuilder out = new StringBuilder(Generate.HEADER)
                .append("package ")
                .append(Generate.PACKAGE)
                .append(";\n\n");
        out.append("import java.util.Optional;\n\n");
        out.append(Javadoc.comment(
                0,
                List.of(
                        "A scope of the service: the names of the <code>"
                                + Javadoc.escape(oauth.get(0).getKey())
                                + "</code> security scheme of the contract, exactly as the service description writes them.",
                        "Each scope's description is its area and its access (read, write or connect), the only meaning"
                                + " the service description gives a scope: what an area holds is not shown."),
                List.of("@see <a href=\"https://www.rfc-editor.org/rfc/rfc6749#section-3.3\">RFC 6749 §3.3</a>")));
        out.append("public enum Scope {\n");
        List<String> names = new ArrayList<>(scopes.keySet());
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            String description = (String) scopes.get(name);
            out.append(
                    Javadoc.line(4, "<code>" + Javadoc.escape(name) + "</code>: " + Javadoc.escape(description) + "."));
            out.append("    ")
                    .append(Names.constant(name))
                    .append('(')
                    .append(Names.literal(name))
                    .append(", ");
            out.append(Names.literal(description)).append(i == names.size() - 1 ? ");\n\n" : "),\n\n");
        }
        out.append(SCOPE_BODY);
        return out.toString();
    }

    private static final String SCOPE_BODY = """
                private final String value;
                private final String description;

                Scope(String value, String description) {
                    this.value = value;
                    this.description = description;
                }

                /** The scope's name as the service writes it, e.g. {@code profile:read}. */
                public String value() {
                    return value;
                }

                /** The scope's area and access, e.g. {@code profile area: read}. */
                public String description() {
                    return description;
                }

                /** The scope's name as the service writes it (what goes into the {@code scope} parameter). */
                @Override
                public String toString() {
                    return value;
                }

                /**
                 * The scope named {@code value}, exactly as the service writes it.
                 *
                 * @param value a scope name, e.g. {@code profile:read}
                 * @return the scope, or empty when the service has no scope of that name
                 */
                public static Optional<Scope> find(String value) {
                    for (Scope scope : values()) {
                        if (scope.value.equals(value)) return Optional.of(scope);
                    }
                    return Optional.empty();
                }
            }
            """;

    /** Schemas.java: a nested class of constants per string, integer or number schema. */
    String schemas() {
        Map<String, Object> schemas =
                Generate.object(Generate.object(doc.get("components")).get("schemas"));
        StringBuilder out = new StringBuilder(Generate.HEADER)
                .append("package ")
                .append(Generate.PACKAGE)
                .append(";\n\n");
        out.append(Javadoc.comment(
                0,
                List.of("The constraints of the contract's string and number schemas, which a type cannot say: patterns"
                        + " (regular expressions that <code>java.util.regex</code> reads as the contract means them),"
                        + " lengths, bounds and lifetimes."),
                List.of()));
        out.append("public final class Schemas {\n    private Schemas() {}\n");
        for (Map.Entry<String, Object> entry : schemas.entrySet()) {
            Map<String, Object> schema = Generate.object(entry.getValue());
            Object type = schema.get("type");
            if (!"string".equals(type) && !"integer".equals(type) && !"number".equals(type)) continue;
            out.append('\n').append(Javadoc.comment(4, paragraphsOf(entry.getKey(), schema), List.of()));
            out.append("    public static final class ").append(entry.getKey()).append(" {\n");
            out.append("        private ").append(entry.getKey()).append("() {}\n");
            constant(out, "PATTERN", "The pattern every value matches.", schema.get("pattern"));
            constant(out, "MIN_LENGTH", "The fewest characters a value has.", schema.get("minLength"));
            constant(out, "MAX_LENGTH", "The most characters a value has.", schema.get("maxLength"));
            constant(out, "EXCLUSIVE_MINIMUM", "Every value is greater than this.", schema.get("exclusiveMinimum"));
            constant(
                    out,
                    "LIFETIME_SECONDS",
                    "How long a token of this kind lives, in seconds.",
                    schema.get("x-lifetime-seconds"));
            out.append("    }\n");
        }
        return out.append("}\n").toString();
    }

    private List<String> paragraphsOf(String name, Map<String, Object> schema) {
        List<String> paragraphs = new ArrayList<>(javadoc.paragraphs(schema));
        String title = schema.get("title") instanceof String t ? Javadoc.escape(t) : name;
        if (paragraphs.isEmpty()) paragraphs.add(title + ".");
        else paragraphs.set(0, title + ": " + paragraphs.get(0));
        return paragraphs;
    }

    private static void constant(StringBuilder out, String field, String doc, Object value) {
        if (value == null) return;
        out.append('\n').append(Javadoc.line(8, doc));
        if (value instanceof String text) {
            out.append("        public static final String ")
                    .append(field)
                    .append(" = ")
                    .append(Names.literal(text));
        } else {
            long number = ((Number) value).longValue();
            String type = number == (int) number ? "int" : "long";
            out.append("        public static final ")
                    .append(type)
                    .append(' ')
                    .append(field)
                    .append(" = ")
                    .append(number);
            if (type.equals("long")) out.append('L');
        }
        out.append(";\n");
    }
}
