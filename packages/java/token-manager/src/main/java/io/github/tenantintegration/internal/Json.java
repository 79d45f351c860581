package io.github.tenantintegration.internal;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The kit's JSON: a strict reader (RFC 8259) and a writer that writes what the TypeScript kit's
 * {@code JSON.stringify} writes (members in order, no spaces, no HTML escaping), so that the records
 * of {@code spec/token-store} are byte for byte the same in every kit. JDK only.
 *
 * <p>Values read: {@link Map} (in the text's order), {@link List}, {@link String}, {@link Boolean},
 * {@link #NULL} for JSON null, and numbers as {@link Long} when integral and within ±2⁵³, else
 * {@link Double}. A failure never quotes the text: it may hold tokens.
 *
 * <p>Internal to the kit: not an API, it may change in any release.
 */
public final class Json {
    /** JSON null, as read (a map's value; {@code Map.get} returning null means absent). */
    public static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    private static final long SAFE = 1L << 53;
    private static final int MAX_DEPTH = 64;

    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** The JSON value of {@code text}, or empty when it is not exactly one JSON value. */
    public static Optional<Object> parse(String text) {
        if (text == null) return Optional.empty();
        Json reader = new Json(text);
        try {
            Object value = reader.value(0);
            reader.space();
            return reader.at == text.length() ? Optional.of(value) : Optional.empty();
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return Optional.empty();
        }
    }

    /** The JSON object of {@code text}, or empty when it is not one. */
    @SuppressWarnings("unchecked")
    public static Optional<Map<String, Object>> parseObject(String text) {
        return parse(text).filter(Map.class::isInstance).map(value -> (Map<String, Object>) value);
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) throw new IllegalArgumentException("too deep");
        space();
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", NULL);
            default:
                return number();
        }
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> out = new LinkedHashMap<>();
        at++;
        space();
        if (text.charAt(at) == '}') {
            at++;
            return out;
        }
        while (true) {
            space();
            if (text.charAt(at) != '"') throw new IllegalArgumentException("a member name");
            String name = string();
            space();
            expect(':');
            out.put(name, value(depth + 1));
            space();
            if (text.charAt(at) == ',') at++;
            else {
                expect('}');
                return out;
            }
        }
    }

    private List<Object> array(int depth) {
        List<Object> out = new ArrayList<>();
        at++;
        space();
        if (text.charAt(at) == ']') {
            at++;
            return Collections.unmodifiableList(out);
        }
        while (true) {
            out.add(value(depth + 1));
            space();
            if (text.charAt(at) == ',') at++;
            else {
                expect(']');
                return Collections.unmodifiableList(out);
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = text.charAt(at++);
            if (c == '"') return out.toString();
            if (c < 0x20) throw new IllegalArgumentException("a control character in a string");
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char escape = text.charAt(at++);
            switch (escape) {
                case '"', '\\', '/' -> out.append(escape);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> throw new IllegalArgumentException("a bad escape");
            }
        }
    }

    private Object number() {
        int start = at;
        if (text.charAt(at) == '-') at++;
        if (text.charAt(at) == '0') at++;
        else digits();
        boolean integral = true;
        if (at < text.length() && text.charAt(at) == '.') {
            at++;
            digits();
            integral = false;
        }
        if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
            at++;
            if (text.charAt(at) == '+' || text.charAt(at) == '-') at++;
            digits();
            integral = false;
        }
        String literal = text.substring(start, at);
        if (integral && literal.length() < 18) {
            long value = Long.parseLong(literal);
            if (Math.abs(value) <= SAFE) return value;
        }
        double value = new BigDecimal(literal).doubleValue();
        if (Double.isInfinite(value)) throw new IllegalArgumentException("a number out of range");
        if (value == Math.rint(value) && Math.abs(value) <= SAFE) return (long) value;
        return value;
    }

    private void digits() {
        int start = at;
        while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') at++;
        if (at == start) throw new IllegalArgumentException("a digit");
    }

    private Object word(String word, Object value) {
        if (!text.startsWith(word, at)) throw new IllegalArgumentException("a literal");
        at += word.length();
        return value;
    }

    private void expect(char c) {
        if (text.charAt(at) != c) throw new IllegalArgumentException("expected " + c);
        at++;
    }

    private void space() {
        while (at < text.length()) {
            char c = text.charAt(at);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
            at++;
        }
    }

    /**
     * {@code value} as JSON text, as {@code JSON.stringify} writes it: a {@link Map} (its order), an
     * {@link Iterable}, a {@link CharSequence}, a {@link Boolean}, a {@link Number}, null or
     * {@link #NULL}. A null map value is left out, as {@code JSON.stringify} leaves out undefined.
     *
     * @throws IllegalArgumentException for any other value, or a number JSON cannot hold
     */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null || value == NULL) out.append("null");
        else if (value instanceof CharSequence text) quote(text.toString(), out);
        else if (value instanceof Boolean) out.append(value);
        else if (value instanceof Number number) out.append(number(number));
        else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (entry.getValue() == null) continue;
                if (!first) out.append(',');
                first = false;
                quote(String.valueOf(entry.getKey()), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Iterable<?> items) {
            out.append('[');
            boolean first = true;
            for (Object item : items) {
                if (!first) out.append(',');
                first = false;
                write(item, out);
            }
            out.append(']');
        } else
            throw new IllegalArgumentException(
                    "no JSON form for a " + value.getClass().getName());
    }

    private static String number(Number number) {
        if (number instanceof Long || number instanceof Integer || number instanceof Short || number instanceof Byte) {
            return number.toString();
        }
        double value = number.doubleValue();
        if (!Double.isFinite(value)) throw new IllegalArgumentException("JSON has no " + value);
        if (value == Math.rint(value) && Math.abs(value) < 1e21) return new BigDecimal(value).toPlainString();
        return BigDecimal.valueOf(value).stripTrailingZeros().toString().replace("E", "e");
    }

    /** Appends {@code text} as a JSON string: the escapes of {@code JSON.stringify} (ES2019). */
    public static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || isLoneSurrogate(text, i)) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        out.append('"');
    }

    private static boolean isLoneSurrogate(String text, int i) {
        char c = text.charAt(i);
        if (Character.isHighSurrogate(c))
            return i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
        if (Character.isLowSurrogate(c)) return i == 0 || !Character.isHighSurrogate(text.charAt(i - 1));
        return false;
    }
}
