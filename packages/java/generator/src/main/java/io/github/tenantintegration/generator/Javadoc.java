package io.github.tenantintegration.generator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the contract's descriptions (markdown-ish text wrapped at about 100 columns) into Javadoc:
 * paragraphs kept, lines joined and wrapped again, {@code `code`} spans as {@code <code>}, HTML and
 * Javadoc's own characters escaped, and each {@code x-assumption} appended after the project's label
 * ({@code ASSUMPTION_LABEL} of spec/marks.mjs), as the docs site and the other kits' types show it.
 */
final class Javadoc {
    /** The widest line written, indentation and {@code " * "} included. */
    static final int WIDTH = 100;

    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");

    /** Stands for a space the wrapping must not break at; written as a space. */
    private static final char UNBROKEN = '\u0001';

    private final String assumptionLabel;

    Javadoc(String assumptionLabel) {
        this.assumptionLabel = assumptionLabel;
    }

    /**
     * The paragraphs of a schema node: its description (if any), then its assumption (if any) after
     * the label. Empty when the node has neither.
     */
    List<String> paragraphs(Map<String, Object> node) {
        List<String> out = new ArrayList<>();
        if (node.get("description") instanceof String description) {
            for (String paragraph : description.trim().split("\n\\s*\n")) {
                if (!paragraph.isBlank()) out.add(html(paragraph));
            }
        }
        if (node.get("x-assumption") instanceof String assumption) {
            // The label is one word for the wrapping: never broken across lines.
            out.add("<b>" + escape(assumptionLabel).replace(' ', UNBROKEN) + "</b> " + html(assumption));
        }
        return out;
    }

    /**
     * A Javadoc comment of {@code paragraphs} (already HTML) and {@code tags} ({@code @param name
     * text}, already HTML), indented by {@code indent} spaces.
     */
    static String comment(int indent, List<String> paragraphs, List<String> tags) {
        String pad = " ".repeat(indent);
        StringBuilder out = new StringBuilder(pad).append("/**\n");
        boolean first = true;
        for (String paragraph : paragraphs) {
            if (!first) out.append(pad).append(" *\n");
            wrap((first ? "" : "<p>") + paragraph, pad + " * ", pad + " * ", out);
            first = false;
        }
        if (!tags.isEmpty()) {
            if (!paragraphs.isEmpty()) out.append(pad).append(" *\n");
            for (String tag : tags) wrap(tag, pad + " * ", pad + " *     ", out);
        }
        return out.append(pad).append(" */\n").toString();
    }

    /** One line of {@code text} as a comment, when it fits; else the wrapped comment. */
    static String line(int indent, String text) {
        String pad = " ".repeat(indent);
        String single = pad + "/** " + text + " */\n";
        return single.length() <= WIDTH + 1 ? single : comment(indent, List.of(text), List.of());
    }

    /** Appends {@code text} as lines of at most {@link #WIDTH} columns, broken at spaces. */
    static void wrap(String text, String firstPrefix, String nextPrefix, StringBuilder out) {
        String prefix = firstPrefix;
        StringBuilder line = new StringBuilder();
        for (String word : text.split(" ")) {
            if (word.isEmpty()) continue;
            if (line.length() > 0 && prefix.length() + line.length() + 1 + word.length() > WIDTH) {
                out.append(prefix).append(line).append('\n');
                line.setLength(0);
                prefix = nextPrefix;
            }
            if (line.length() > 0) line.append(' ');
            line.append(word);
        }
        if (line.length() > 0) out.append(prefix).append(line).append('\n');
        for (int i = 0; i < out.length(); i++) if (out.charAt(i) == UNBROKEN) out.setCharAt(i, ' ');
    }

    /** A description's text as one line of HTML: whitespace squashed, code spans marked, the rest escaped. */
    static String html(String text) {
        String squashed = text.trim().replaceAll("\\s+", " ");
        StringBuilder out = new StringBuilder();
        Matcher code = CODE_SPAN.matcher(squashed);
        int at = 0;
        while (code.find()) {
            out.append(escape(squashed.substring(at, code.start())));
            out.append("<code>").append(escape(code.group(1))).append("</code>");
            at = code.end();
        }
        return out.append(escape(squashed.substring(at))).toString();
    }

    /**
     * Text safe in a Javadoc comment: HTML's {@code & < >}, Javadoc's {@code @} (a tag at a line's
     * start) and {@code { }} (inline tags), and the end of a comment.
     */
    static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("@", "&#64;")
                .replace("{", "&#123;")
                .replace("}", "&#125;")
                .replace("*/", "*&#47;")
                .replace("\\u", "&#92;u");
    }
}
