package io.github.tenantintegration.tenanttest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.loopback.LoopbackSignIn;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.LoopbackException;
import io.github.tenantintegration.tokenmanager.TokenManager;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("process")
class LoopbackSignInTest {
    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @Test
    void aCommandLineToolSignsInThroughItsLoopbackRedirect() throws Exception {
        String redirect = "http://127.0.0.1:" + freePort() + "/callback";
        try (Sandbox sandbox = Sandbox.builder()
                .clients(new Sandbox.Client("cli", List.of(redirect), List.of()))
                .start()) {
            TokenManager manager = TokenManager.builder(sandbox.url(), "cli", redirect)
                    .scopes(Scope.PROFILE_READ)
                    .clock(sandbox.clock())
                    .build();
            AtomicReference<Integer> page = new AtomicReference<>();
            LoopbackSignIn.options()
                    .openBrowser(url -> {
                        // The browser: the sandbox approves with a redirect, which the browser follows to the tool.
                        HttpClient browser = HttpClient.newBuilder()
                                .followRedirects(HttpClient.Redirect.ALWAYS)
                                .build();
                        try {
                            page.set(browser.send(
                                            HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofString())
                                    .statusCode());
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .run(manager);
            assertTrue(manager.isSignedIn());
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (page.get() == null && System.nanoTime() < deadline) Thread.sleep(20);
            assertEquals(200, page.get());
        }
    }

    @Test
    void anUnregisteredRedirectUriIsRefusedBeforeWaiting() throws Exception {
        String registered = "http://127.0.0.1:" + freePort() + "/callback";
        String other = "http://127.0.0.1:" + freePort() + "/callback";
        try (Sandbox sandbox = Sandbox.builder()
                .clients(new Sandbox.Client("cli", List.of(registered), List.of()))
                .start()) {
            TokenManager manager = TokenManager.builder(sandbox.url(), "cli", other)
                    .scopes(Scope.PROFILE_READ)
                    .build();
            LoopbackException e = assertThrows(
                    LoopbackException.class,
                    () -> LoopbackSignIn.options()
                            .output(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()))
                            .run(manager));
            assertEquals(ErrorCode.REDIRECT_URI_REFUSED, e.code());
            assertTrue(e.status() >= 400 && e.status() < 500);
        }
    }

    @Test
    void aPortInUseIsNamed() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String redirect = "http://127.0.0.1:" + taken.getLocalPort() + "/callback";
            TokenManager manager = TokenManager.builder("http://127.0.0.1:1", "cli", redirect)
                    .scopes(Scope.PROFILE_READ)
                    .build();
            LoopbackException e = assertThrows(LoopbackException.class, () -> LoopbackSignIn.signIn(manager));
            assertEquals(ErrorCode.CALLBACK_PORT_IN_USE, e.code());
            assertEquals(taken.getLocalPort(), e.port());
            assertTrue(URI.create(redirect).getPort() == e.port());
        }
    }
}
