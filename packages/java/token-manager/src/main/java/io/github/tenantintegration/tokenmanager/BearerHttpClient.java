package io.github.tenantintegration.tokenmanager;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The {@link HttpClient} of {@link TokenManager#httpClient(HttpClient)}: requests for the tenant's
 * origin get {@code Authorization: Bearer <token>} (and {@code Accept: application/json} when they
 * have no {@code Accept}); a 401 tells the manager and sends the request once more with the new token
 * (RFC 6750 §3.1). Requests for any other origin go through the base client untouched. The request
 * body must be replayable for the second send (every {@code BodyPublishers} publisher but
 * {@code ofInputStream} is). Closing it does not close the base client.
 */
final class BearerHttpClient extends HttpClient {
    /** Where each request finds its manager: one manager, or a {@link Sessions}' session. */
    interface Source {
        /** The manager of the request, in use until {@link #leave}. */
        TokenManager enter();

        /** The request is done with {@code manager}. */
        default void leave(TokenManager manager) {}
    }

    private final Source source;
    private final String origin;
    private final HttpClient base;

    BearerHttpClient(TokenManager manager, HttpClient base) {
        this(() -> manager, manager.origin, base);
    }

    BearerHttpClient(Source source, String origin, HttpClient base) {
        if (base == null) throw TokenManager.invalid("base", "must not be null");
        if (base.followRedirects() != Redirect.NEVER) {
            throw TokenManager.invalid(
                    "base",
                    "a bearer token must never follow a redirect: build the client with followRedirects(NEVER)");
        }
        this.source = source;
        this.origin = origin;
        this.base = base;
    }

    /** The request is for the tenant's origin (so the token may go with it). */
    boolean forTenant(URI uri) {
        return uri != null
                && uri.getHost() != null
                && Origins.normalTarget(uri, false).equals(origin);
    }

    /** The request with this token, and {@code Accept: application/json} unless it has an Accept. */
    static HttpRequest withToken(HttpRequest request, String token) {
        HttpRequest.Builder builder =
                HttpRequest.newBuilder(request, (name, value) -> !name.equalsIgnoreCase("Authorization"));
        builder.header("Authorization", "Bearer " + token);
        if (request.headers().firstValue("Accept").isEmpty()) builder.header("Accept", "application/json");
        return builder.build();
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        if (!forTenant(request.uri())) return base.send(request, handler);
        TokenManager manager = source.enter();
        try {
            return send(manager, request, handler);
        } finally {
            source.leave(manager);
        }
    }

    private <T> HttpResponse<T> send(TokenManager manager, HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        String token = manager.accessToken();
        HttpResponse<T> response = base.send(withToken(request, token), handler);
        if (response.statusCode() != 401) return response;
        manager.onUnauthorized(token);
        String again;
        try {
            again = manager.accessToken();
        } catch (TokenManagerException e) {
            return response;
        }
        if (again.equals(token)) return response;
        return base.send(withToken(request, again), handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return sendAsync(request, handler, null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(
            HttpRequest request, HttpResponse.BodyHandler<T> handler, HttpResponse.PushPromiseHandler<T> push) {
        if (!forTenant(request.uri())) return base.sendAsync(request, handler, push);
        TokenManager manager = source.enter();
        CompletableFuture<HttpResponse<T>> sent;
        try {
            sent = sendAsync(manager, request, handler, push);
        } catch (RuntimeException e) {
            source.leave(manager);
            throw e;
        }
        return sent.whenComplete((response, error) -> source.leave(manager));
    }

    private <T> CompletableFuture<HttpResponse<T>> sendAsync(
            TokenManager manager,
            HttpRequest request,
            HttpResponse.BodyHandler<T> handler,
            HttpResponse.PushPromiseHandler<T> push) {
        return manager.accessTokenAsync()
                .thenCompose(token -> base.sendAsync(withToken(request, token), handler, push)
                        .thenCompose(response -> {
                            if (response.statusCode() != 401) return CompletableFuture.completedFuture(response);
                            manager.onUnauthorized(token);
                            return manager.accessTokenAsync()
                                    .handle((again, error) -> error != null || again.equals(token) ? null : again)
                                    .thenCompose(again -> again == null
                                            ? CompletableFuture.completedFuture(response)
                                            : base.sendAsync(withToken(request, again), handler, push));
                        }));
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return base.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return base.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return base.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return base.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return base.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return base.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return base.authenticator();
    }

    @Override
    public Version version() {
        return base.version();
    }

    @Override
    public Optional<Executor> executor() {
        return base.executor();
    }

    /** The tenant it adds the token for, never a token. */
    @Override
    public String toString() {
        return "BearerHttpClient[" + origin + "]";
    }
}
