import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.nio.file.Path;

public class RevokeToken {
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
        if (!manager.isSignedIn()) {
            System.out.println(
                    "Not signed in: there is nothing to revoke.");
            return;
        }
        // Sign out at the tenant: the stored access token is revoked
        // (its request shape is assumed, RFC 7009 §2.1), which
        // disconnects the integration, then both tokens are cleared.
        // On failure they are kept: retry, or manager.signOut() to
        // forget them here only.
        manager.revoke();
        System.out.println("Signed out: the access token is revoked.");
    }
}
