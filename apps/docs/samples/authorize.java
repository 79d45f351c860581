import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.loopback.LoopbackSignIn;
import io.github.tenantintegration.tokenmanager.SessionInfo;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

public class Authorize {
    public static void main(String[] args) {
        // 0600; shared with the other samples and kits.
        FileStorage storage = FileStorage.of(
                Path.of("~/.config/my-cli/tokens.json"));
        TokenManager manager = TokenManager.builder(
                        // The sandbox of `pnpm start`; a real tenant:
                        // https://<tenant_host>
                        "http://127.0.0.1:4020",
                        "demo-cli",
                        // Registered for the client exactly, port
                        // included:
                        "http://127.0.0.1:53682/callback")
                .scopes(Scope.PROFILE_READ)
                .storage(storage)
                .build();
        // The authorize URL (a fresh state, a PKCE S256 challenge,
        // RFC 7636) is printed to open in a browser; a one-shot
        // server on the redirect URI's port takes the callback,
        // whose state is compared exactly before the code is
        // exchanged (exchangeToken) and the tokens stored.
        SessionInfo session = LoopbackSignIn.signIn(manager);
        String until = DateTimeFormatter.ofPattern("HH:mm 'UTC'")
                .withZone(ZoneOffset.UTC)
                .format(session.expiresAt());
        System.out.println(
                "Signed in; the access token expires at " + until);
    }
}
