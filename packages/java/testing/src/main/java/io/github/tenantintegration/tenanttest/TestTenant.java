package io.github.tenantintegration.tenanttest;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.tokenmanager.AuthorizationRequest;
import io.github.tenantintegration.tokenmanager.SessionInfo;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A token manager signed in to the sandbox and an {@link HttpClient} on it (the manager's bearer
 * client), both on the sandbox's clock: what {@link TenantExtension} hands a test.
 *
 * <pre>{@code
 * TestTenant tenant = TestTenant.create(sandbox);        // signed in
 * tenant.advance(Duration.ofMinutes(16));                // past the 15-minute access token
 * HttpResponse<String> user = tenant.get("/api/v1/auth/user"); // refreshed first
 * assertEquals(1, tenant.refreshCount());
 * }</pre>
 */
public final class TestTenant {
    private final Sandbox sandbox;
    private final TokenManager manager;
    private final HttpClient client;
    private final Sandbox.Client registered;
    private final long since;

    private TestTenant(Sandbox sandbox, TokenManager manager, Sandbox.Client registered, long since) {
        this.sandbox = sandbox;
        this.manager = manager;
        this.client = manager.httpClient();
        this.registered = registered;
        this.since = since;
    }

    /**
     * A tenant on {@code sandbox}, signed in through its auto-approve, as its first client asking for
     * {@link Scope#PROFILE_READ}.
     *
     * @throws SandboxException {@code SANDBOX_FAILED}, {@code SIGN_IN_FAILED}
     */
    public static TestTenant create(Sandbox sandbox) {
        return create(sandbox, builder -> builder.scopes(Scope.PROFILE_READ), true);
    }

    /**
     * A tenant on {@code sandbox} whose manager is made by {@code configure} from a builder that has the
     * sandbox's URL, its first client and the sandbox's clock (the clock must stay the sandbox's),
     * signed in when {@code signIn}.
     */
    public static TestTenant create(Sandbox sandbox, UnaryOperator<TokenManager.Builder> configure, boolean signIn) {
        Sandbox.Client registered = sandbox.clients().get(0);
        long since = sandbox.lastSeq();
        TokenManager.Builder builder = TokenManager.builder(
                        sandbox.url(),
                        registered.id(),
                        registered.redirectUris().get(0))
                .scopes(Scope.PROFILE_READ)
                .clock(sandbox.clock());
        TestTenant tenant = new TestTenant(sandbox, configure.apply(builder).build(), registered, since);
        if (signIn) tenant.signIn();
        return tenant;
    }

    /**
     * Signs the manager in through the sandbox's auto-approve: the authorize URL answered with a 302 to
     * the callback, which completes the sign-in.
     *
     * @throws SandboxException {@code SIGN_IN_FAILED} when the sandbox does not approve
     */
    public SessionInfo signIn() {
        AuthorizationRequest request = manager.beginAuthorization();
        return manager.completeAuthorization(approve(request.url()));
    }

    /**
     * Plays the browser at the authorize URL: the sandbox auto-approves with a 302 whose {@code Location}
     * is the callback, returned (pass it to {@code completeAuthorization}).
     *
     * @throws SandboxException {@code SIGN_IN_FAILED} when the sandbox does not approve (the message says
     *     why, never a code)
     */
    public static String approve(URI authorizeUrl) {
        HttpClient browser = HttpClient.newBuilder()
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        HttpResponse<String> response;
        try {
            response = browser.send(
                    HttpRequest.newBuilder(authorizeUrl)
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SandboxException(
                    SandboxException.Code.SIGN_IN_FAILED, "the sandbox did not answer the authorization request", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException(SandboxException.Code.SIGN_IN_FAILED, "interrupted", e);
        }
        String location = response.headers().firstValue("Location").orElse(null);
        if (response.statusCode() != 302 || location == null || !location.contains("code=")) {
            String reason = response.body().strip();
            throw new SandboxException(
                    SandboxException.Code.SIGN_IN_FAILED,
                    "the sandbox did not approve the sign-in (HTTP " + response.statusCode() + "): "
                            + reason.substring(0, Math.min(300, reason.length())),
                    null);
        }
        return authorizeUrl.resolve(location).toString();
    }

    /** The sandbox. */
    public Sandbox sandbox() {
        return sandbox;
    }

    /** The signed-in manager, on the sandbox's clock. */
    public TokenManager manager() {
        return manager;
    }

    /** The manager's bearer client: the token goes to the sandbox only; a 401 refreshes and sends again. */
    public HttpClient client() {
        return client;
    }

    /** The client id it signed in as. */
    public String clientId() {
        return registered.id();
    }

    /** The redirect URI it signed in with. */
    public String redirectUri() {
        return registered.redirectUris().get(0);
    }

    /** The sandbox's URL of {@code path}. */
    public URI url(String path) {
        return sandbox.url(path);
    }

    /** {@code GET path} through {@link #client()}, the body as text. */
    public HttpResponse<String> get(String path) {
        try {
            return client.send(HttpRequest.newBuilder(url(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new SandboxException(SandboxException.Code.SANDBOX_FAILED, "GET " + path + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException(SandboxException.Code.SANDBOX_FAILED, "GET " + path + ": interrupted", e);
        }
    }

    /** Moves the sandbox's clock forward by {@code by} (the manager's with it). */
    public void advance(Duration by) {
        sandbox.advance(by);
    }

    /** How many refreshes the sandbox answered since this tenant was made. */
    public long refreshCount() {
        return sandbox.refreshCount(since);
    }

    /** The sandbox's events since this tenant was made. */
    public List<SandboxEvent> events() {
        return sandbox.events(since);
    }

    /** The sandbox's refresh-token ledger. */
    public Ledger ledger() {
        return sandbox.ledger();
    }

    /** Its sandbox and client, never a token. */
    @Override
    public String toString() {
        return "TestTenant[" + sandbox.url() + ", client " + registered.id() + "]";
    }
}
