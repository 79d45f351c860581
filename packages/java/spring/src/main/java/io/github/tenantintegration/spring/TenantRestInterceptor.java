package io.github.tenantintegration.spring;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.net.URI;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * The token manager for Spring's {@code RestClient} and {@code RestTemplate}: a {@link
 * ClientHttpRequestInterceptor} that sends {@code Authorization: Bearer <token>} (and {@code Accept:
 * application/json} when the request has no {@code Accept}) with the requests for the tenant's origin
 * only, and answers a 401 of the tenant by telling the manager ({@link TokenManager#onUnauthorized}),
 * taking the token it then gives (one refresh, however many calls met the 401) and sending the request
 * once more (RFC 6750 §3.1). Assumption (not in the service description, which shows no status for an
 * expired or revoked token): the API answers such a token 401.
 *
 * <pre>{@code
 * RestClient client = RestClient.builder()
 *         .baseUrl(manager.baseUrl())
 *         .requestInterceptor(TenantRestInterceptor.of(manager))
 *         .build();
 * }</pre>
 *
 * <p>Spring buffers the body of a request that passes through an interceptor, so every body can be sent
 * twice. A redirect the request factory follows is not seen by the interceptor and would carry the
 * header: give the client a request factory that does not follow redirects ({@code
 * JdkClientHttpRequestFactory}; not {@code RestTemplate}'s default, {@code HttpURLConnection}, which
 * follows a GET's) so that the token never follows one. Calls block while a refresh
 * runs. A manager's failure (not signed in, the session ended, the storage failed) is thrown as the
 * {@link TokenManagerException}, its code and message; after a 401 it leaves the 401 to the caller.
 */
public final class TenantRestInterceptor implements ClientHttpRequestInterceptor {
    /**
     * The request attribute naming the session of a request made for one user of a {@link Sessions}
     * ({@code restClient.get().uri(…).attribute(TenantRestInterceptor.SESSION_ID, user.id())}), read by
     * {@link #of(Sessions)}.
     */
    public static final String SESSION_ID = "io.github.tenantintegration.spring.sessionId";

    private final Predicate<URI> forTenant;
    private final Function<HttpRequest, TokenManager> managers;

    private TenantRestInterceptor(Predicate<URI> forTenant, Function<HttpRequest, TokenManager> managers) {
        this.forTenant = forTenant;
        this.managers = managers;
    }

    /** The interceptor of one session: {@code manager}'s. */
    public static TenantRestInterceptor of(TokenManager manager) {
        Objects.requireNonNull(manager, "manager");
        return new TenantRestInterceptor(manager::isForTenant, request -> manager);
    }

    /**
     * The interceptor of a server acting for many users: each request for the tenant carries the token
     * of the session named by its {@link #SESSION_ID} attribute. A request for the tenant without one
     * fails with {@code INVALID_SESSION_ID} before anything is sent: there is no default session to
     * hand to the wrong user.
     */
    public static TenantRestInterceptor of(Sessions sessions) {
        return of(sessions, TenantRestInterceptor::sessionIdAttribute);
    }

    /**
     * The interceptor of a server acting for many users, whose {@code sessionId} tells whose session a
     * request for the tenant is for (from the request's attributes, or the thread's security context).
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID} (per request) for an id that breaks the
     *     rule of {@code spec/token-store}, or none
     */
    public static TenantRestInterceptor of(Sessions sessions, Function<HttpRequest, String> sessionId) {
        Objects.requireNonNull(sessions, "sessions");
        Objects.requireNonNull(sessionId, "sessionId");
        return new TenantRestInterceptor(
                sessions::isForTenant, request -> sessions.manager(requireSessionId(sessionId.apply(request))));
    }

    private static String sessionIdAttribute(HttpRequest request) {
        Object id = request.getAttributes().get(SESSION_ID);
        return id == null ? null : id.toString();
    }

    /** {@code id}, or {@code INVALID_SESSION_ID} when a request for the tenant names no session. */
    static String requireSessionId(String id) {
        if (id != null) return id;
        throw new TokenManagerException(
                ErrorCode.INVALID_SESSION_ID,
                "a request for the tenant names no session: set its attribute " + SESSION_ID
                        + " (or give a resolver) to the id of the user it is made for; nothing was sent");
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        if (!forTenant.test(request.getURI())) return execution.execute(request, body);
        TokenManager manager = managers.apply(request);
        String token = manager.accessToken();
        ClientHttpResponse response = execution.execute(withToken(request, token), body);
        if (response.getStatusCode().value() != 401) return response;
        manager.onUnauthorized(token);
        String again;
        try {
            again = manager.accessToken();
        } catch (TokenManagerException e) {
            return response; // the 401 stands; the manager's own error is for the next call
        }
        if (again.equals(token)) return response;
        response.close();
        return execution.execute(withToken(request, again), body);
    }

    /** The request with this token, and {@code Accept: application/json} unless it has an Accept. */
    private static HttpRequest withToken(HttpRequest request, String token) {
        HttpHeaders headers = request.getHeaders();
        headers.setBearerAuth(token);
        if (headers.getFirst(HttpHeaders.ACCEPT) == null) headers.set(HttpHeaders.ACCEPT, "application/json");
        return request;
    }

    /** What it adds the token for, never a token. */
    @Override
    public String toString() {
        return "TenantRestInterceptor";
    }
}
