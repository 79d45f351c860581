package io.github.tenantintegration.loopback;

import io.github.tenantintegration.tokenmanager.AuthorizationRequest;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.SessionInfo;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Signs a command-line tool in (RFC 8252): listens on the port of the manager's loopback redirect
 * URI, asks the tenant whether it knows that redirect URI ({@link LoopbackServer#checkRedirect}), shows
 * the authorize URL, waits for one callback, completes the authorization and tells the browser how it
 * ended.
 *
 * <pre>{@code
 * SessionInfo session = LoopbackSignIn.signIn(manager); // prints the URL to open on standard error
 * }</pre>
 *
 * <p>The manager's redirect URI must be {@code http://127.0.0.1:<port>/<path>} (or {@code localhost},
 * {@code [::1]}) with the port registered for the client: the tenant compares redirect URIs exactly.
 * Immutable: each option returns a new instance.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc8252#section-7.3">RFC 8252 §7.3, §8.3</a>
 */
public final class LoopbackSignIn {
    /** How long {@link #run} waits for the callback by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

    private final Consumer<URI> open;
    private final Duration timeout;
    private final HttpClient client;
    private final PrintStream out;

    private LoopbackSignIn(Consumer<URI> open, Duration timeout, HttpClient client, PrintStream out) {
        this.open = open;
        this.timeout = timeout;
        this.client = client;
        this.out = out;
    }

    /** The defaults: the URL printed to standard error, a 5-minute wait. */
    public static LoopbackSignIn options() {
        return new LoopbackSignIn(null, DEFAULT_TIMEOUT, null, System.err);
    }

    /** {@code options().run(manager)}. */
    public static SessionInfo signIn(TokenManager manager) {
        return options().run(manager);
    }

    /**
     * How the authorize URL is shown, e.g. by running {@code xdg-open}; a failure makes the sign-in
     * print the URL instead. It runs on a thread of its own, so it may make the whole round trip itself
     * (a test, a headless browser). Default: print the URL.
     */
    public LoopbackSignIn openBrowser(Consumer<URI> open) {
        return new LoopbackSignIn(Objects.requireNonNull(open, "open"), timeout, client, out);
    }

    /** How long to wait for the callback (default 5 min). */
    public LoopbackSignIn timeout(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new TokenManagerException(ErrorCode.INVALID_OPTIONS, "timeout: give a positive duration");
        }
        return new LoopbackSignIn(open, timeout, client, out);
    }

    /** The client of the redirect check (default: a plain client; it must not follow redirects). */
    public LoopbackSignIn httpClient(HttpClient client) {
        return new LoopbackSignIn(open, timeout, Objects.requireNonNull(client, "client"), out);
    }

    /** Where the URL is printed when no browser opens (default standard error; the URL holds a state, no token). */
    public LoopbackSignIn output(PrintStream out) {
        return new LoopbackSignIn(open, timeout, client, Objects.requireNonNull(out, "out"));
    }

    /**
     * Signs {@code manager} in.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS}, {@code CALLBACK_PORT_IN_USE},
     *     {@code REDIRECT_URI_REFUSED}, {@code CALLBACK_TIMEOUT}, and what {@code completeAuthorization}
     *     throws ({@code AUTHORIZATION_DENIED}, {@code STATE_MISMATCH}…)
     */
    public SessionInfo run(TokenManager manager) {
        if (LoopbackServer.check(manager.redirectUri()).port() == 0) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_OPTIONS,
                    "redirectUri: port 0 cannot be registered with the tenant, which "
                            + "compares redirect URIs exactly: give the registered port (LoopbackServer.listen takes port 0 for tests)");
        }
        try (LoopbackServer server = LoopbackServer.listen(manager.redirectUri())) {
            AuthorizationRequest request = manager.beginAuthorization();
            server.checkRedirect(request.url(), client);
            show(request.url());
            String callback = server.await(timeout);
            try {
                SessionInfo session = manager.completeAuthorization(callback);
                server.respond("");
                return session;
            } catch (TokenManagerException e) {
                server.respond(e.code().name());
                throw e;
            }
        }
    }

    private void show(URI url) {
        if (open == null) {
            out.println("Open this address in your browser to sign in:\n  " + url);
            return;
        }
        CompletableFuture.runAsync(() -> open.accept(url)).exceptionally(error -> {
            out.println("Could not open a browser; open this address to sign in:\n  " + url);
            return null;
        });
    }
}
