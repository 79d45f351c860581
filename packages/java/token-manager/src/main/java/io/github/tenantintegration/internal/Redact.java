package io.github.tenantintegration.internal;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Removes secrets from text: every form a token, code, verifier or state may take when printed (raw,
 * percent-encoded in either case and space style, JSON-escaped, base64), and the values that follow
 * credential schemes and secret-named keys. The one copy of the rule in the Java kit, the same as
 * the Go kit's {@code internal/redact} and the Python kit's {@code _redact.py}.
 *
 * <p>Internal to the kit: not an API, it may change in any release.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-10.3">RFC 6749 §10.3, §10.4</a>
 * @see <a href="https://www.rfc-editor.org/rfc/rfc6750#section-5.3">RFC 6750 §5.3</a>
 */
public final class Redact {
    /** What a secret prints as. */
    public static final String REDACTED = "[redacted]";

    /** Shorter values are not treated as secrets: redacting them would garble ordinary text. */
    public static final int MIN_SECRET = 8;

    private static final Pattern CREDENTIALS = Pattern.compile("(?i)\\b(bearer|basic)(\\s+)[A-Za-z0-9\\-._~+/%]+=*");
    private static final Pattern SECRET_KEYS = Pattern.compile(
            "(?i)(^|[^\\w-])(access_token|refresh_token|id_token|token|code|code_verifier|state|client_secret|password)"
                    + "(\"?\\s*[=:]\\s*\"?)([^\\s&\",;}]+)");

    private Redact() {}

    /** The printed forms of a secret at least {@link #MIN_SECRET} long. */
    static Set<String> forms(String secret) {
        String query = URLEncoder.encode(secret, StandardCharsets.UTF_8);
        StringBuilder json = new StringBuilder();
        Json.quote(secret, json);
        List<String> forms = new ArrayList<>(
                List.of(secret, query, query.replace("+", "%20"), json.substring(1, json.length() - 1)));
        for (String form : List.copyOf(forms)) forms.add(lowerPercent(form));
        Set<String> out = new LinkedHashSet<>();
        for (String form : forms) if (form.length() >= MIN_SECRET) out.add(form);
        return out;
    }

    private static String lowerPercent(String text) {
        char[] chars = text.toCharArray();
        for (int i = 0; i + 2 < chars.length; i++) {
            if (chars[i] == '%') {
                chars[i + 1] = Character.toLowerCase(chars[i + 1]);
                chars[i + 2] = Character.toLowerCase(chars[i + 2]);
            }
        }
        return new String(chars);
    }

    /** Replaces every printed form of every secret in {@code text} by {@link #REDACTED}, longest first. */
    public static String text(String text, Collection<String> secrets) {
        if (text == null || text.isEmpty()) return text;
        List<String> forms = new ArrayList<>();
        for (String secret : secrets) if (secret != null && !secret.isEmpty()) forms.addAll(forms(secret));
        forms.sort(Comparator.comparingInt(String::length).reversed());
        for (String form : forms) text = text.replace(form, REDACTED);
        return text;
    }

    /**
     * {@code text} without the given secrets (every form, base64 included), nor the values of
     * credential schemes ({@code Bearer …}) and secret-named keys ({@code code=…}), which covers
     * secrets it was never told about.
     */
    public static String scrub(String text, Collection<String> secrets) {
        if (text == null) return null;
        List<String> variants = new ArrayList<>();
        for (String secret : secrets) {
            if (secret == null || secret.isEmpty()) continue;
            byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
            String standard = Base64.getEncoder().encodeToString(bytes);
            String url = Base64.getUrlEncoder().encodeToString(bytes);
            variants.addAll(List.of(secret, standard, standard.replaceAll("=+$", ""), url, url.replaceAll("=+$", "")));
        }
        text = text(text, variants);
        text = CREDENTIALS
                .matcher(text)
                .replaceAll("$1$2" + REDACTED.replace("[", "\\[").replace("]", "\\]"));
        return SECRET_KEYS
                .matcher(text)
                .replaceAll("$1$2$3" + REDACTED.replace("[", "\\[").replace("]", "\\]"));
    }
}
