import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.loopback.LoopbackSignIn;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;

public class GetAuthenticatedUser {
    // The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
    static final String BASE_URL = "http://127.0.0.1:4020";

    public static void main(String[] args) throws Exception {
        TokenManager manager = TokenManager.builder(
                        BASE_URL,
                        "demo-cli",
                        "http://127.0.0.1:53682/callback")
                .scopes(Scope.PROFILE_READ)
                .storage(FileStorage.of(
                        Path.of("~/.config/my-cli/tokens.json")))
                .build();
        // Sign in first: without tokens the call fails with
        // NOT_SIGNED_IN. signIn prints the URL to open, then waits
        // for the browser on the redirect URI's port.
        if (!manager.isSignedIn()) {
            LoopbackSignIn.signIn(manager);
        }

        // The bearer token goes to the tenant only, refreshed before
        // it expires; a 401 (an expired or revoked token, assumed:
        // RFC 6750 §3.1) is refreshed once and the request sent
        // again.
        HttpClient client = manager.httpClient();
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create(BASE_URL + "/api/v1/auth/user"))
                .header("Accept", "application/json") // description §4
                .build();
        HttpResponse<String> response = client.send(
                request, HttpResponse.BodyHandlers.ofString());
        switch (response.statusCode()) {
            // The user: a JSON object, the description lists no
            // fields.
            case 200 -> System.out.println(response.body());
            // The token lacks the route's scope (description §5.9);
            // the scope the challenge names (assumed: RFC 6750 §3.1).
            case 403 -> System.out.println("needs " + response.headers()
                    .firstValue("WWW-Authenticate").orElse(""));
            default -> throw new IllegalStateException(
                    "GET /api/v1/auth/user: " + response.statusCode());
        }
    }
}
