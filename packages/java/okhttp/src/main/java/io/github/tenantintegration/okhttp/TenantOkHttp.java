package io.github.tenantintegration.okhttp;

import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.util.Objects;
import okhttp3.Authenticator;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.Route;

/**
 * The token manager for OkHttp: an {@link Interceptor} that sends {@code Authorization: Bearer <token>}
 * (and {@code Accept: application/json} when the request has no {@code Accept}) with the requests for the
 * tenant's origin only, and an {@link Authenticator} that answers a 401 of the tenant by telling the
 * manager ({@code onUnauthorized}), taking the token it then gives (one refresh, however many calls met
 * the 401) and sending the request once more (RFC 6750 §3.1). Assumption (not in the service description,
 * which shows no status for an expired or revoked token): the API answers such a token 401.
 *
 * <pre>{@code
 * OkHttpClient client = TenantOkHttp.configure(new OkHttpClient.Builder(), manager).build();
 * }</pre>
 *
 * <p>The interceptor is an application interceptor: a redirect OkHttp follows is a new request it makes
 * after the interceptor, which OkHttp sends without the {@code Authorization} header to another host, so
 * the token never follows a redirect elsewhere. Calls block while a refresh runs, on OkHttp's dispatcher
 * threads for asynchronous calls. A manager's failure (not signed in, the session ended) fails the call
 * with an {@link IOException} whose cause is the {@link TokenManagerException}, its code and message.
 */
public final class TenantOkHttp {
    private TenantOkHttp() {}

    /** {@code builder} with the {@link #interceptor} and the {@link #authenticator} of {@code manager}. */
    public static OkHttpClient.Builder configure(OkHttpClient.Builder builder, TokenManager manager) {
        return builder.addInterceptor(interceptor(manager)).authenticator(authenticator(manager));
    }

    /** The interceptor that adds the bearer token (and {@code Accept: application/json}) to the tenant's requests. */
    public static Interceptor interceptor(TokenManager manager) {
        Objects.requireNonNull(manager, "manager");
        return chain -> {
            Request request = chain.request();
            if (!manager.isForTenant(request.url().uri())) return chain.proceed(request);
            return chain.proceed(withToken(request, token(manager::accessToken)));
        };
    }

    /**
     * The authenticator that answers the tenant's 401 once: the refused token reported, the request sent
     * again with the manager's next token; no retry when that token is the same, or the request was
     * already sent again.
     */
    public static Authenticator authenticator(TokenManager manager) {
        Objects.requireNonNull(manager, "manager");
        return (Route route, Response response) -> {
            Request request = response.request();
            if (!manager.isForTenant(request.url().uri()) || response.priorResponse() != null) return null;
            String header = request.header("Authorization");
            if (header == null || !header.startsWith("Bearer ")) return null;
            String refused = header.substring("Bearer ".length());
            manager.onUnauthorized(refused);
            String again;
            try {
                again = manager.accessToken();
            } catch (TokenManagerException e) {
                return null; // the 401 stands; the manager's own error is for the next call
            }
            return again.equals(refused) ? null : withToken(request, again);
        };
    }

    static Request withToken(Request request, String token) {
        Request.Builder builder = request.newBuilder().header("Authorization", "Bearer " + token);
        if (request.header("Accept") == null) builder.header("Accept", "application/json");
        return builder.build();
    }

    /** The manager's token, its failure as the IOException an interceptor may throw. */
    private static String token(java.util.function.Supplier<String> source) throws IOException {
        try {
            return source.get();
        } catch (TokenManagerException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
