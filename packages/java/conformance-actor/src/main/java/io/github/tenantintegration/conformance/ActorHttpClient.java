package io.github.tenantintegration.conformance;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The HttpClient the manager is given (its {@code httpClient} option, a seam an application has too):
 * names the actor on every request ({@code Sandbox-Actor}); a refresh passes the point {@code sending}
 * as it leaves and {@code in-flight} once the tenant has answered, before the manager reads the answer.
 * The sessions' client has no fault (null): a fault is armed on the actor's manager only.
 */
final class ActorHttpClient extends HttpClient {
    static final String ACTOR_HEADER = "Sandbox-Actor";

    private final HttpClient base;
    private final String name;
    private final Fault fault;

    ActorHttpClient(HttpClient base, String name, Fault fault) {
        this.base = base;
        this.name = name;
        this.fault = fault;
    }

    private HttpRequest named(HttpRequest request) {
        return HttpRequest.newBuilder(request, (header, value) -> true)
                .setHeader(ACTOR_HEADER, name)
                .build();
    }

    /** Whether the request is a refresh: a POST to /oauth/token whose JSON body has grant_type refresh_token. */
    static boolean isRefresh(HttpRequest request) {
        if (!"POST".equals(request.method()) || !request.uri().getPath().endsWith("/oauth/token")) return false;
        return request.bodyPublisher()
                .map(ActorHttpClient::body)
                .orElse("")
                .contains("\"grant_type\":\"refresh_token\"");
    }

    /** The body a publisher sends (the manager's are replayable strings). */
    private static String body(HttpRequest.BodyPublisher publisher) {
        StringBuilder text = new StringBuilder();
        CompletableFuture<Void> done = new CompletableFuture<>();
        publisher.subscribe(new Flow.Subscriber<>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(ByteBuffer item) {
                text.append(StandardCharsets.UTF_8.decode(item));
            }

            @Override
            public void onError(Throwable throwable) {
                done.complete(null);
            }

            @Override
            public void onComplete() {
                done.complete(null);
            }
        });
        done.join();
        return text.toString();
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        return base.send(named(request), handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return sendAsync(request, handler, null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(
            HttpRequest request, HttpResponse.BodyHandler<T> handler, HttpResponse.PushPromiseHandler<T> push) {
        if (fault == null || !isRefresh(request)) return base.sendAsync(named(request), handler, push);
        fault.sending();
        return base.sendAsync(named(request), handler, push).thenApplyAsync(response -> {
            fault.reach("in-flight");
            if (response.statusCode() == 200) fault.answeredOk();
            return response;
        });
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
}
