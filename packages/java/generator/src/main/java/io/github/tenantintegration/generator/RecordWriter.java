package io.github.tenantintegration.generator;

import io.github.tenantintegration.generator.Records.Component;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Writes the file of one record (see {@link Records}). */
final class RecordWriter {
    private final String name;
    private final Map<String, Object> schema;
    private final List<Component> components;
    private final Map<String, String> constants;
    private final boolean open;
    private final boolean extra;
    private final String parent;
    private final Javadoc javadoc;
    private final StringBuilder out = new StringBuilder();

    RecordWriter(
            String name,
            Map<String, Object> schema,
            List<Component> components,
            Map<String, String> constants,
            boolean open,
            boolean extra,
            String parent,
            Javadoc javadoc) {
        this.name = name;
        this.schema = schema;
        this.components = components;
        this.constants = constants;
        this.open = open;
        this.extra = extra;
        this.parent = parent;
        this.javadoc = javadoc;
    }

    String write() {
        out.append(Generate.HEADER).append("package ").append(Generate.PACKAGE).append(";\n\n");
        out.append(imports());
        out.append(Javadoc.comment(0, classDoc(), paramTags()));
        String head = "public record " + name + "(" + String.join(", ", declarations()) + ")"
                + (parent == null ? "" : " implements " + parent) + " {";
        if (head.length() <= Javadoc.WIDTH) out.append(head).append('\n');
        else {
            out.append("public record ").append(name).append("(\n        ");
            out.append(String.join(",\n        ", declarations())).append(')');
            out.append(parent == null ? " {\n" : "\n        implements " + parent + " {\n");
        }
        writeConstants();
        writeConstructor();
        if (parent != null) writeDiscriminator();
        if (open) writeGetter();
        else writeToJson();
        if (components.stream().anyMatch(Component::secret)) writeToString();
        out.append("}\n");
        return out.toString();
    }

    private String imports() {
        boolean maps =
                open || extra || components.stream().anyMatch(c -> c.type().contains("Map"));
        boolean checks = open || components.stream().anyMatch(c -> c.required() && !isPrimitive(c));
        StringBuilder imports = new StringBuilder();
        if (open || extra) imports.append("import java.util.Collections;\nimport java.util.LinkedHashMap;\n");
        if (maps) imports.append("import java.util.Map;\n");
        if (checks) imports.append("import java.util.Objects;\n");
        return imports.length() == 0 ? "" : imports.append('\n').toString();
    }

    private static boolean isPrimitive(Component c) {
        return Character.isLowerCase(c.type().charAt(0));
    }

    private List<String> classDoc() {
        List<String> doc = new ArrayList<>();
        List<String> paragraphs = javadoc.paragraphs(schema);
        String title = schema.get("title") instanceof String t ? Javadoc.escape(t) : name;
        if (paragraphs.isEmpty()) doc.add(title + ".");
        else {
            doc.add(title + ": " + paragraphs.get(0));
            doc.addAll(paragraphs.subList(1, paragraphs.size()));
        }
        if (components.stream().anyMatch(Component::secret)) {
            doc.add("Holds a secret: {@link #toString()} shows it as <code>[redacted]</code>.");
        }
        return doc;
    }

    private List<String> paramTags() {
        List<String> tags = new ArrayList<>();
        if (open)
            tags.add("@param fields the JSON object's members, as parsed (unmodifiable; a JSON null is a null value)");
        for (Component c : components) {
            String text = c.doc().isEmpty() ? "<code>" + c.json() + "</code>" : String.join(" ", c.doc());
            String presence = c.required() ? "" : " Optional: null when absent.";
            tags.add("@param " + c.java() + " <code>" + c.json() + "</code>: " + text + presence);
        }
        if (extra) tags.add("@param additionalProperties any other member, by name (never null; empty when none)");
        return tags;
    }

    private List<String> declarations() {
        List<String> declarations = new ArrayList<>();
        if (open) declarations.add("Map<String, Object> fields");
        for (Component c : components) declarations.add(c.type().replace("java.util.", "") + " " + c.java());
        if (extra) declarations.add("Map<String, String> additionalProperties");
        return declarations;
    }

    private void writeConstants() {
        for (Map.Entry<String, String> constant : constants.entrySet()) {
            String field = Names.constant(constant.getKey());
            out.append(Javadoc.line(4, "The value of <code>" + constant.getKey() + "</code>: {@value}."));
            out.append("    public static final String ").append(field).append(" = ");
            out.append(Names.literal(constant.getValue())).append(";\n\n");
        }
    }

    private void writeConstructor() {
        List<String> checks = new ArrayList<>();
        for (Component c : components) {
            if (c.required() && !isPrimitive(c)) {
                checks.add("        Objects.requireNonNull(" + c.java() + ", " + Names.literal(c.java()) + ");\n");
            }
        }
        out.append("    /**\n     * Checks that every required component is given");
        out.append(open || extra ? ", and keeps an unmodifiable copy of the map.\n" : ".\n");
        out.append(
                "     *\n     * @throws NullPointerException naming the first required component that is null\n     */\n");
        out.append("    public ").append(name).append(" {\n");
        checks.forEach(out::append);
        if (open) {
            out.append(
                    "        fields = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(fields, \"fields\")));\n");
        }
        if (extra) {
            List<String> known =
                    components.stream().map(c -> Names.literal(c.json())).toList();
            out.append("        if (additionalProperties != null) {\n");
            out.append("            for (String known : java.util.List.of(")
                    .append(String.join(", ", known))
                    .append(")) {\n");
            out.append("                if (additionalProperties.containsKey(known)) {\n");
            out.append(
                    "                    throw new IllegalArgumentException(known + \" is a component, not an additional property\");\n");
            out.append("                }\n            }\n        }\n");
            out.append("        additionalProperties = additionalProperties == null\n");
            out.append("                ? Map.of()\n");
            out.append("                : Collections.unmodifiableMap(new LinkedHashMap<>(additionalProperties));\n");
        }
        out.append("    }\n\n");
    }

    private void writeDiscriminator() {
        Map.Entry<String, String> constant = constants.entrySet().iterator().next();
        out.append("    @Override\n    public String ")
                .append(Names.camel(constant.getKey()))
                .append("() {\n");
        out.append("        return ").append(Names.constant(constant.getKey())).append(";\n    }\n\n");
    }

    private void writeGetter() {
        out.append(Javadoc.line(4, "The member {@code name}, or null when it is absent (or JSON null)."));
        out.append("    public Object get(String name) {\n        return fields.get(name);\n    }\n");
    }

    private void writeToJson() {
        out.append(
                "    /**\n     * This value as the JSON text the contract describes: its members in the contract's order, an\n");
        out.append(
                "     * optional one left out when null, no spaces.\n     *\n     * @return a JSON object\n     */\n");
        if (parent != null) out.append("    @Override\n");
        out.append("    public String toJson() {\n        JsonText json = new JsonText();\n");
        for (Map.Entry<String, String> constant : constants.entrySet()) {
            out.append("        json.member(")
                    .append(Names.literal(constant.getKey()))
                    .append(", ");
            out.append(Names.constant(constant.getKey())).append(");\n");
        }
        for (Component c : components) {
            out.append("        json.member(")
                    .append(Names.literal(c.json()))
                    .append(", ")
                    .append(c.java())
                    .append(");\n");
        }
        if (extra) {
            out.append("        additionalProperties.forEach(json::member);\n");
        }
        out.append("        return json.end();\n    }\n");
    }

    private void writeToString() {
        out.append(
                "\n    /**\n     * Every component but the secrets, which print as <code>[redacted]</code>: a record would print\n");
        out.append("     * them all.\n     */\n    @Override\n    public String toString() {\n");
        out.append("        return \"").append(name).append('[');
        String separator = "";
        for (Component c : components) {
            out.append(separator).append(c.java()).append('=');
            if (c.secret()) out.append("[redacted]");
            else out.append("\"\n                + ").append(c.java()).append(" + \"");
            separator = ", ";
        }
        if (extra)
            out.append(separator)
                    .append("additionalProperties=\"\n                + additionalProperties.keySet() + \"");
        out.append("]\";\n    }\n");
    }
}
