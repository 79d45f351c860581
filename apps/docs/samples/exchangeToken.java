import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.loopback.LoopbackSignIn;
import io.github.tenantintegration.tokenmanager.SessionInfo;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

public class ExchangeToken {
    public static void main(String[] args) {
        TokenManager manager = TokenManager.builder(
                        // The sandbox of `pnpm start`; a real tenant:
                        // https://<tenant_host>
                        "http://127.0.0.1:4020",
                        "demo-cli",
                        "http://127.0.0.1:53682/callback")
                .scopes(Scope.PROFILE_READ)
                .storage(FileStorage.of(
                        Path.of("~/.config/my-cli/tokens.json")))
                .build();
        // grant_type=authorization_code: completing a sign-in
        // exchanges the callback's code with the PKCE verifier (no
        // secret).
        if (!manager.isSignedIn()) {
            LoopbackSignIn.signIn(manager);
        }
        // grant_type=refresh_token: accessToken() refreshes first
        // when the access token is within a minute of its 15
        // minutes. A rotated refresh token is stored before the new
        // access token is used, one refresh at a time among the
        // processes sharing the file.
        manager.accessToken();
        SessionInfo session = manager.session().orElseThrow();
        String until = DateTimeFormatter.ofPattern("HH:mm 'UTC'")
                .withZone(ZoneOffset.UTC)
                .format(session.expiresAt());
        System.out.println("The access token is valid until " + until);
    }
}
