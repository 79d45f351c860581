package io.github.tenantintegration.generator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes one Java record per object schema of the contract, a sealed interface per {@code oneOf}
 * with a discriminator, and the {@code JsonText} helper their {@code toJson()} uses.
 *
 * <p>A record's components are the schema's properties in the contract's order, less those with a
 * {@code const} (a static constant instead); required ones are checked non-null. A record holding a
 * secret overrides {@code toString()} so that printing it never shows the secret (a record prints
 * every component by default).
 */
final class Records {
    /**
     * The properties that hold a secret: the tokens, the authorization code and the PKCE verifier.
     * The service description keeps refresh tokens out of logs (§5.7); RFC 6749 §10.3–§10.5 and RFC
     * 7636 §7.1 make the others confidential.
     */
    static final Set<String> SECRETS = Set.of("access_token", "refresh_token", "code", "code_verifier", "token");

    private final Map<String, Object> schemas;
    private final Javadoc javadoc;

    Records(Map<String, Object> schemas, Javadoc javadoc) {
        this.schemas = schemas;
        this.javadoc = javadoc;
    }

    /** The component of a property: its names, Java type, documentation and whether it is required. */
    record Component(String json, String java, String type, List<String> doc, boolean required, boolean secret) {}

    /** The file of the schema {@code name}, or null when it is not an object or a oneOf. */
    String file(String name) {
        Map<String, Object> schema = Generate.object(schemas.get(name));
        if (schema.containsKey("oneOf")) return sealedInterface(name, schema);
        if ("object".equals(schema.get("type"))) return record(name, schema);
        return null;
    }

    private String sealedInterface(String name, Map<String, Object> schema) {
        List<String> permits = new ArrayList<>();
        for (Object option : Generate.list(schema.get("oneOf"))) {
            permits.add(Names.refName((String) Generate.object(option).get("$ref")));
        }
        StringBuilder out = new StringBuilder(Generate.HEADER)
                .append("package ")
                .append(Generate.PACKAGE)
                .append(";\n\n");
        List<String> doc = new ArrayList<>(javadoc.paragraphs(schema));
        doc.add("One of "
                + String.join(
                        ", ", permits.stream().map(p -> "{@link " + p + "}").toList()) + ".");
        out.append(Javadoc.comment(0, doc, List.of()));
        out.append("public sealed interface ").append(name).append(" permits ").append(String.join(", ", permits));
        out.append(" {\n");
        String discriminator =
                (String) Generate.object(schema.get("discriminator")).get("propertyName");
        out.append(Javadoc.line(4, "The value of <code>" + discriminator + "</code> that tells the options apart."));
        out.append("    String ").append(Names.camel(discriminator)).append("();\n\n");
        out.append(Javadoc.line(4, "This value as the JSON text the contract describes."));
        out.append("    String toJson();\n}\n");
        return out.toString();
    }

    private String record(String name, Map<String, Object> schema) {
        Map<String, Object> properties = Generate.object(schema.getOrDefault("properties", Map.of()));
        Set<String> required = Set.copyOf(Generate.list(schema.getOrDefault("required", List.of())).stream()
                .map(String.class::cast)
                .toList());
        Map<String, String> constants = new LinkedHashMap<>();
        List<Component> components = new ArrayList<>();
        for (Map.Entry<String, Object> property : properties.entrySet()) {
            Map<String, Object> node = Generate.object(property.getValue());
            if (node.get("const") instanceof String value) {
                constants.put(property.getKey(), value);
                continue;
            }
            components.add(component(property.getKey(), node, required.contains(property.getKey())));
        }
        Object additional = schema.get("additionalProperties");
        boolean open = Boolean.TRUE.equals(additional) && properties.isEmpty();
        boolean extra = additional instanceof Map && !properties.isEmpty();
        String parent = parentOf(name);
        return new RecordWriter(name, schema, components, constants, open, extra, parent, javadoc).write();
    }

    /** The sealed interface that lists {@code name} among its options, or null. */
    private String parentOf(String name) {
        for (Map.Entry<String, Object> entry : schemas.entrySet()) {
            Object oneOf = Generate.object(entry.getValue()).get("oneOf");
            if (oneOf == null) continue;
            for (Object option : Generate.list(oneOf)) {
                if (name.equals(Names.refName((String) Generate.object(option).get("$ref")))) return entry.getKey();
            }
        }
        return null;
    }

    private Component component(String json, Map<String, Object> node, boolean required) {
        List<String> doc = new ArrayList<>(javadoc.paragraphs(node));
        Map<String, Object> resolved = node;
        if (node.get("$ref") instanceof String ref) {
            resolved = Generate.object(schemas.get(Names.refName(ref)));
            doc.addAll(javadoc.paragraphs(resolved));
        }
        String type = javaType(resolved, required);
        return new Component(json, Names.camel(json), type, doc, required, SECRETS.contains(json));
    }

    /** The Java type of a schema: boxed when the property is optional (absent is null). */
    static String javaType(Map<String, Object> schema, boolean required) {
        Object type = schema.get("type");
        if ("string".equals(type)) return "String";
        if ("integer".equals(type)) {
            boolean wide = "int64".equals(schema.get("format"));
            return required ? (wide ? "long" : "int") : (wide ? "Long" : "Integer");
        }
        if ("number".equals(type)) return required ? "double" : "Double";
        if ("boolean".equals(type)) return required ? "boolean" : "Boolean";
        if ("object".equals(type)) return "java.util.Map<String, Object>";
        throw new IllegalArgumentException("no Java type for the schema type " + type);
    }
}
