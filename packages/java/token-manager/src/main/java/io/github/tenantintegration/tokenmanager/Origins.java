package io.github.tenantintegration.tokenmanager;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The tenant's origin and the redirect URI in a normal form: what a callback must share with the
 * redirect URI, and what a bearer token may be sent to (RFC 6749 §3.1.2; RFC 9700 §4.4, §4.7).
 */
final class Origins {
    private static final Pattern IPV4_LOOPBACK = Pattern.compile("^127(\\.\\d{1,3}){3}$");

    private Origins() {}

    /** localhost, 127.0.0.0/8 and ::1 (never resolved: a name other than localhost is not loopback). */
    static boolean isLoopback(String host) {
        if (host == null) return false;
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (bare.equalsIgnoreCase("localhost") || IPV4_LOOPBACK.matcher(bare).matches()) return true;
        if (!bare.contains(":")) return false;
        try {
            return InetAddress.getByName(bare).isLoopbackAddress(); // an IPv6 literal: no lookup
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /**
     * The tenant's origin, checked and normalized.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} saying what is wrong
     */
    static String tenantOrigin(String base) {
        URI uri;
        try {
            uri = new URI(base);
        } catch (URISyntaxException | NullPointerException e) {
            throw invalid("give the tenant's origin, e.g. https://acme.tenant.test");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (uri.getHost() == null || (!scheme.equals("https") && !scheme.equals("http"))) {
            throw invalid("give the tenant's origin, e.g. https://acme.tenant.test");
        }
        if (scheme.equals("http") && !isLoopback(uri.getHost())) {
            throw invalid("http is allowed only to a loopback host (the local sandbox); use https");
        }
        if (uri.getRawUserInfo() != null) throw invalid("must not carry credentials");
        String path = uri.getRawPath();
        if ((path != null && !path.isEmpty() && !path.equals("/"))
                || uri.getRawQuery() != null
                || uri.getRawFragment() != null
                || base.contains("?")
                || base.contains("#")) {
            throw invalid("give the tenant's origin only: the SDK adds /oauth/... and /api/v1/... itself");
        }
        return normalTarget(uri, false);
    }

    private static TokenManagerException invalid(String why) {
        return new TokenManagerException(ErrorCode.INVALID_OPTIONS, "baseUrl: " + why);
    }

    /** Scheme, host and non-default port (and the path, when {@code withPath}) in a normal form. */
    static String normalTarget(URI uri, boolean withPath) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
        if (host.contains(":") && !host.startsWith("[")) host = "[" + host + "]";
        int port = uri.getPort();
        boolean defaultPort =
                port == -1 || (scheme.equals("http") && port == 80) || (scheme.equals("https") && port == 443);
        StringBuilder out = new StringBuilder(scheme).append("://").append(host);
        if (!defaultPort) out.append(':').append(port);
        if (withPath) {
            String path = uri.getRawPath();
            out.append(path == null || path.isEmpty() ? "/" : path);
        }
        return out.toString();
    }
}
