package io.github.tenantintegration.loopback;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.LoopbackException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A one-shot HTTP server on the loopback port of a redirect URI, waiting for the authorization
 * callback (RFC 8252 §7.3, §8.3). The first GET of the redirect URI's path is the callback; every other
 * request gets 404. The browser's request is held open until {@link #respond} says how the sign-in
 * ended, so that its page tells the truth. Only the loopback interface is bound: nothing outside the
 * machine can reach it. Use it directly to drive the browser yourself, or through
 * {@link LoopbackSignIn}.
 *
 * <p>RFC 8252 lets a native client pick any port at run time; this service compares the redirect URI
 * exactly with a registered one, so the port cannot vary: the server binds the port of the registered
 * redirect URI, and a busy port is {@code CALLBACK_PORT_IN_USE} naming it.
 */
public final class LoopbackServer implements AutoCloseable {
    private static final String DONE_PAGE = "Signed in. You can close this window and return to the terminal.";
    private static final String FAILED_PAGE =
            "Sign-in failed: %s. Return to the terminal for details; you can close this window.";

    private final String redirectUri;
    private final int port;
    private final String path;
    private final String origin;
    private final HttpServer server;
    private final ExecutorService threads;
    private final CompletableFuture<String> callback = new CompletableFuture<>();
    private final CompletableFuture<String> outcome = new CompletableFuture<>();
    private final CompletableFuture<Void> answered = new CompletableFuture<>();
    private final AtomicBoolean taken = new AtomicBoolean();

    private LoopbackServer(String redirectUri, int port, String path, HttpServer server, ExecutorService threads) {
        this.redirectUri = redirectUri;
        this.port = port;
        this.path = path;
        this.origin = URI.create(redirectUri).getScheme() + "://"
                + URI.create(redirectUri).getRawAuthority();
        this.server = server;
        this.threads = threads;
    }

    private static TokenManagerException invalid(String why) {
        return new TokenManagerException(ErrorCode.INVALID_OPTIONS, "redirectUri: " + why);
    }

    /** The address to bind, the port and the path of a loopback redirect URI. */
    record Target(String bind, int port, String path) {}

    static Target check(String redirectUri) {
        URI uri;
        try {
            uri = new URI(redirectUri);
        } catch (URISyntaxException | NullPointerException e) {
            uri = null;
        }
        String host = uri == null || uri.getHost() == null
                ? ""
                : uri.getHost().toLowerCase(Locale.ROOT).replaceAll("^\\[|]$", "");
        boolean loopback = host.equals("localhost") || host.matches("^127(\\.\\d{1,3}){3}$") || host.equals("::1");
        if (uri == null || !"http".equals(uri.getScheme()) || !loopback || uri.getPort() < 0 || uri.getPort() > 65535) {
            throw invalid(
                    "a loopback sign-in needs http://127.0.0.1:<port>/<path> (or localhost, [::1]) with the port registered "
                            + "for the client (RFC 8252 §7.3)");
        }
        // localhost is served on 127.0.0.1 (RFC 8252 §8.3 recommends the address over the name).
        String bind = host.equals("localhost") ? "127.0.0.1" : host;
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        return new Target(bind, uri.getPort(), path);
    }

    /**
     * Starts a server on the host and port of {@code redirectUri} (http to a loopback address with a port;
     * port 0 lets the system choose, for tests).
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} (not such a URI); {@link LoopbackException}
     *     {@code CALLBACK_PORT_IN_USE} (with the port) when another program listens on the port
     */
    public static LoopbackServer listen(String redirectUri) {
        Target target = check(redirectUri);
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(target.bind()), target.port()), 0);
        } catch (BindException e) {
            throw new LoopbackException(
                    ErrorCode.CALLBACK_PORT_IN_USE,
                    "port " + target.port() + " of " + target.bind()
                            + " is in use by another program (an earlier sign-in still waiting?). The sign-in must come back to exactly "
                            + redirectUri
                            + ", the redirect URI registered with the tenant: stop that program rather than choosing another port",
                    target.port(),
                    0,
                    e);
        } catch (IOException e) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_CALLBACK, "cannot listen on " + target.bind() + " port " + target.port(), e);
        }
        int bound = server.getAddress().getPort();
        String actual = redirectUri;
        if (target.port() == 0) {
            URI uri = URI.create(redirectUri);
            String host = target.bind().contains(":") ? "[" + target.bind() + "]" : target.bind();
            actual = uri.getScheme() + "://" + host + ":" + bound + (uri.getRawPath() == null ? "" : uri.getRawPath())
                    + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        }
        ExecutorService threads = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "tenant-integration-loopback");
            thread.setDaemon(true);
            return thread;
        });
        LoopbackServer loopback = new LoopbackServer(actual, bound, target.path(), server, threads);
        server.createContext("/", loopback::serve);
        server.setExecutor(threads);
        server.start();
        return loopback;
    }

    /** The bound redirect URI: the one given, or, when it asked for port 0, with the port chosen. */
    public String redirectUri() {
        return redirectUri;
    }

    /** The bound port. */
    public int port() {
        return port;
    }

    /** Whether the callback has arrived. */
    public boolean calledBack() {
        return taken.get();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!"GET".equals(exchange.getRequestMethod())
                    || !path.equals(exchange.getRequestURI().getRawPath())
                    || !taken.compareAndSet(false, true)) {
                write(exchange, 404, "Not found");
                return;
            }
            String query = exchange.getRequestURI().getRawQuery();
            // The redirect URI's origin with the request's path and query: the Host header is not trusted.
            callback.complete(origin + path + (query == null ? "" : "?" + query));
            String failure;
            try {
                failure = outcome.get(2, TimeUnit.MINUTES);
            } catch (TimeoutException | ExecutionException e) {
                failure = "no outcome";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = "the sign-in was stopped";
            }
            if (failure.isEmpty()) write(exchange, 200, DONE_PAGE);
            else write(exchange, 400, String.format(FAILED_PAGE, failure));
        } finally {
            if (taken.get()) answered.complete(null);
        }
    }

    private static void write(HttpExchange exchange, int status, String page) throws IOException {
        byte[] body = page.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /**
     * Asks the tenant, before the browser goes there, whether it would send the browser back here: a GET
     * of the authorize endpoint with only the request's {@code client_id} and {@code redirect_uri} (no
     * state, no challenge: nothing can be approved). The kit assumes, from RFC 6749 §4.1.2.1 (the
     * service description does not show the answer), that the tenant checks those two before it
     * redirects anywhere and shows an error page when either is not registered. So a 4xx page (but 404,
     * 408, 429) means the redirect URI or the client id is not registered; a redirect, a 5xx or no answer
     * tell nothing.
     *
     * @throws LoopbackException {@code REDIRECT_URI_REFUSED} (with the status)
     * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2.1">RFC 6749 §3.1.2.4, §4.1.2.1</a>
     */
    public void checkRedirect(URI authorizeUrl, HttpClient client) {
        String clientId = null;
        String redirect = null;
        for (String pair : authorizeUrl.getRawQuery() == null
                ? new String[0]
                : authorizeUrl.getRawQuery().split("&")) {
            int eq = pair.indexOf('=');
            if (eq < 0) continue;
            String name = pair.substring(0, eq);
            String value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (name.equals("client_id")) clientId = value;
            if (name.equals("redirect_uri")) redirect = value;
        }
        if (clientId == null || redirect == null) return;
        URI probe = URI.create(authorizeUrl.getScheme() + "://" + authorizeUrl.getRawAuthority()
                + authorizeUrl.getRawPath() + "?client_id=" + URLEncoder.encode(clientId, StandardCharsets.UTF_8)
                + "&redirect_uri=" + URLEncoder.encode(redirect, StandardCharsets.UTF_8));
        HttpClient plain = client != null
                ? client
                : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        int status;
        try {
            status = plain.send(
                            HttpRequest.newBuilder(probe)
                                    .header("Accept", "text/html")
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return; // unreachable: nothing learnt, the wait goes on
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (status < 400 || status > 499 || status == 404 || status == 408 || status == 429) return;
        throw new LoopbackException(
                ErrorCode.REDIRECT_URI_REFUSED,
                "the tenant answered the authorize request with an error page (HTTP "
                        + status + ") instead of redirecting to " + redirect
                        + ": check that this redirect URI is registered for client " + clientId
                        + " exactly as written (scheme, host, port " + port + " and path), and the client id",
                port,
                status,
                null);
    }

    /**
     * Waits for the callback and returns its full URL (pass it to {@code completeAuthorization}).
     *
     * @throws LoopbackException {@code CALLBACK_TIMEOUT} after {@code timeout} (the message says what to
     *     check at the tenant)
     * @see <a href="https://www.rfc-editor.org/rfc/rfc8252#section-7.3">RFC 8252 §7.3</a>
     */
    public String await(Duration timeout) {
        try {
            return callback.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new LoopbackException(
                    ErrorCode.CALLBACK_TIMEOUT,
                    "no authorization callback arrived at " + redirectUri + " within "
                            + timeout.toSeconds()
                            + " s. If the browser shows an error page at the tenant instead, check that the client_id is "
                            + "registered there with exactly this redirect URI (port " + port
                            + " and path included) and that it may ask for the "
                            + "scopes requested",
                    port,
                    0,
                    null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the callback");
        } catch (ExecutionException e) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_CALLBACK, "the loopback receiver closed before the callback", e.getCause());
        }
    }

    /**
     * Ends the browser's request: the success page ({@code failure} empty) or the failure page naming
     * {@code failure} (a reason that holds no secret, e.g. an error code).
     */
    public void respond(String failure) {
        outcome.complete(failure == null ? "" : failure);
        if (calledBack()) {
            try {
                answered.get(5, TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // The browser left: nothing more to tell it.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the server and frees the port; safe to call twice. */
    @Override
    public void close() {
        outcome.complete("the sign-in was stopped");
        callback.completeExceptionally(new IllegalStateException("closed"));
        server.stop(0);
        threads.shutdownNow();
    }

    /** Its redirect URI, never a code or state. */
    @Override
    public String toString() {
        return "LoopbackServer[" + redirectUri + "]";
    }
}
