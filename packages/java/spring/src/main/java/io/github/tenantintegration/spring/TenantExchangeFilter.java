package io.github.tenantintegration.spring;

import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.net.URI;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * The token manager for Spring's {@code WebClient}: an {@link ExchangeFilterFunction} that sends {@code
 * Authorization: Bearer <token>} (and {@code Accept: application/json} when the request has no {@code
 * Accept}) with the requests for the tenant's origin only, and answers a 401 of the tenant by telling
 * the manager ({@link TokenManager#onUnauthorized}), taking the token it then gives (one refresh,
 * however many calls met the 401) and sending the request once more (RFC 6750 §3.1). Assumption (not in
 * the service description, which shows no status for an expired or revoked token): the API answers such
 * a token 401.
 *
 * <pre>{@code
 * WebClient client = WebClient.builder()
 *         .baseUrl(manager.baseUrl())
 *         .filter(TenantExchangeFilter.of(manager))
 *         .build();
 * }</pre>
 *
 * <p><b>Never blocks.</b> The token comes from {@link TokenManager#accessTokenAsync()}: a fresh token at
 * once, a refresh on the manager's executor, never on the event loop that subscribed; the request goes
 * on when the refresh completes. Cancelling the request ends its wait, not the refresh.
 *
 * <p><b>The second send.</b> A request sent again writes its body again from its {@code BodyInserter}:
 * a value ({@code bodyValue}), a form, multipart data, a {@code Resource} or a cold publisher write the
 * same bytes again. A body that can be written once only (a hot publisher, a stream read as it goes) must
 * carry the attribute {@link #ONE_SHOT_BODY}: such a request is not sent again, its 401 goes back to the
 * caller (the manager was told, so the next request carries the refreshed token).
 *
 * <p>A manager's failure (not signed in, the session ended, the storage failed) is the {@link
 * TokenManagerException} as the error of the exchange, its code and message; after a 401 it leaves the
 * 401 to the caller. Give the client a connector that does not follow redirects (Reactor Netty's and
 * the JDK's do not by default), so that the token never follows one.
 */
public final class TenantExchangeFilter implements ExchangeFilterFunction {
    /**
     * The request attribute naming the session of a request made for one user of a {@link Sessions}
     * ({@code webClient.get().uri(…).attribute(TenantExchangeFilter.SESSION_ID, user.id())}), read by
     * {@link #of(Sessions)}; the same name as {@link TenantRestInterceptor#SESSION_ID}.
     */
    public static final String SESSION_ID = TenantRestInterceptor.SESSION_ID;

    /** The request attribute ({@code true}) of a request whose body can be written once only: never sent again. */
    public static final String ONE_SHOT_BODY = "io.github.tenantintegration.spring.oneShotBody";

    private final Predicate<URI> forTenant;
    private final Function<ClientRequest, Mono<TokenManager>> managers;

    private TenantExchangeFilter(Predicate<URI> forTenant, Function<ClientRequest, Mono<TokenManager>> managers) {
        this.forTenant = forTenant;
        this.managers = managers;
    }

    /** The filter of one session: {@code manager}'s. */
    public static TenantExchangeFilter of(TokenManager manager) {
        Objects.requireNonNull(manager, "manager");
        return new TenantExchangeFilter(manager::isForTenant, request -> Mono.just(manager));
    }

    /**
     * The filter of a server acting for many users: each request for the tenant carries the token of the
     * session named by its {@link #SESSION_ID} attribute. A request for the tenant without one fails with
     * {@code INVALID_SESSION_ID} before anything is sent: there is no default session to hand to the wrong
     * user.
     */
    public static TenantExchangeFilter of(Sessions sessions) {
        return of(
                sessions,
                request -> Mono.justOrEmpty(request.attribute(SESSION_ID)).map(Object::toString));
    }

    /**
     * The filter of a server acting for many users, whose {@code sessionId} tells whose session a request
     * for the tenant is for: from the request's attributes, or the subscriber's context (e.g. {@code
     * ReactiveSecurityContextHolder.getContext().map(…)}); an empty {@code Mono} names no session.
     *
     * <p>The exchange fails with {@code INVALID_SESSION_ID} for an id that breaks the rule of {@code
     * spec/token-store}, or none; nothing is sent.
     */
    public static TenantExchangeFilter of(Sessions sessions, Function<ClientRequest, Mono<String>> sessionId) {
        Objects.requireNonNull(sessions, "sessions");
        Objects.requireNonNull(sessionId, "sessionId");
        return new TenantExchangeFilter(
                sessions::isForTenant,
                request -> sessionId
                        .apply(request)
                        .defaultIfEmpty("")
                        .map(id -> sessions.manager(TenantRestInterceptor.requireSessionId(id.isEmpty() ? null : id))));
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        if (!forTenant.test(request.url())) return next.exchange(request);
        return managers.apply(request).flatMap(manager -> send(manager, request, next));
    }

    private static Mono<ClientResponse> send(TokenManager manager, ClientRequest request, ExchangeFunction next) {
        return token(manager)
                .flatMap(token -> next.exchange(withToken(request, token))
                        .flatMap(response -> response.statusCode().value() == 401
                                ? afterUnauthorized(manager, request, next, token, response)
                                : Mono.just(response)));
    }

    /**
     * The 401 told to the manager, then the request sent once more with its next token; the 401 itself
     * when there is no other token (the refresh failed, or it gave the same) or the body is one-shot.
     */
    private static Mono<ClientResponse> afterUnauthorized(
            TokenManager manager,
            ClientRequest request,
            ExchangeFunction next,
            String refused,
            ClientResponse response) {
        manager.onUnauthorized(refused);
        if (Boolean.TRUE.equals(request.attribute(ONE_SHOT_BODY).orElse(null))) return Mono.just(response);
        return token(manager)
                .onErrorResume(
                        TokenManagerException.class, e -> Mono.empty()) // the manager's error is for the next call
                .filter(again -> !again.equals(refused))
                .flatMap(again -> response.releaseBody().then(next.exchange(withToken(request, again))))
                .switchIfEmpty(Mono.fromSupplier(() -> response));
    }

    /** The manager's token, without blocking: a fresh one at once, else when its refresh completes. */
    private static Mono<String> token(TokenManager manager) {
        return Mono.fromFuture(manager::accessTokenAsync);
    }

    /** The request with this token, and {@code Accept: application/json} unless it has an Accept. */
    private static ClientRequest withToken(ClientRequest request, String token) {
        return ClientRequest.from(request)
                .headers(headers -> {
                    headers.setBearerAuth(token);
                    if (headers.getFirst(HttpHeaders.ACCEPT) == null)
                        headers.set(HttpHeaders.ACCEPT, "application/json");
                })
                .build();
    }

    /** What it adds the token for, never a token. */
    @Override
    public String toString() {
        return "TenantExchangeFilter";
    }
}
