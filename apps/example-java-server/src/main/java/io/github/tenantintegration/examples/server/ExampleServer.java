package io.github.tenantintegration.examples.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.MemoryStorage;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.SignInHandlers;
import io.github.tenantintegration.tokenmanager.Storage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Pattern;

/**
 * A tiny web app whose users each connect their own tenant account: a server acting for many users
 * with the Java kit ({@link Sessions} and {@link SignInHandlers}) on the JDK's own HTTP server. It has
 * a login of its own (pick a user name), a "Connect your tenant account" button, and a page showing
 * {@code GET /api/v1/auth/user} of the tenant account connected by whoever is logged in.
 *
 * <pre>
 * PORT          the port to listen on, on 127.0.0.1 (default 8093)
 * TENANT_URL    the tenant (default http://127.0.0.1:4020, the sandbox `pnpm start` serves)
 * CLIENT_ID     the OAuth client (default demo-server)
 * REDIRECT_URI  the redirect URI registered for it (default http://127.0.0.1:&lt;PORT&gt;/callback)
 * TOKEN_FILE    keep the sessions in this token file (several processes, of any kit, may share it)
 * </pre>
 *
 * <p>Without {@code TOKEN_FILE} the sessions live in memory. Each of the app's users is one session of
 * the kit, named by the user's name: every call names it, so no user is ever served another's tokens.
 * Nothing here is the kit's own security model beyond the sign-in: the app's login takes a name
 * without a password, as a demo.
 */
public final class ExampleServer {
    /** The app's login cookie: a random value naming a login kept on the server. */
    static final String LOGIN_COOKIE = "app-login";

    /**
     * The form of a user's name here: it is the session id of the user's tenant account, so it must
     * fit the kit's rule ({@code SessionId.check}), which this stricter one does.
     */
    static final Pattern USER_NAME = Pattern.compile("[a-z0-9]{1,32}");

    private static final System.Logger LOG = System.getLogger(ExampleServer.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Sessions sessions;
    private final SignInHandlers signIn;
    private final String tenant;
    /** The app's login cookie value → the user's name. */
    private final Map<String, String> logins = new ConcurrentHashMap<>();

    ExampleServer(Sessions sessions, String tenant) {
        this.sessions = sessions;
        this.tenant = tenant;
        this.signIn = SignInHandlers.builder(sessions)
                .onError((request, error) -> LOG.log(
                        System.Logger.Level.WARNING, "tenant sign-in refused: " + request + ": " + error.getMessage()))
                .build();
    }

    public static void main(String[] args) throws IOException {
        String port = env("PORT", "8093");
        String tenant = env("TENANT_URL", "http://127.0.0.1:4020");
        Sessions sessions = Sessions.builder(TokenManager.builder(
                                tenant,
                                env("CLIENT_ID", "demo-server"),
                                env("REDIRECT_URI", "http://127.0.0.1:" + port + "/callback"))
                        .scopes(Scope.PROFILE_READ)
                        .storage(storage()))
                .build();
        ExampleServer app = new ExampleServer(sessions, tenant);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(port)), 0);
        server.createContext("/", app::handle);
        ExecutorService workers = Executors.newFixedThreadPool(16);
        server.setExecutor(workers);
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(1);
            workers.shutdown();
        }));
        System.out.println("example-java-server listening on http://127.0.0.1:" + port);
    }

    static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    /** Where the sessions live: a token file, or memory. */
    static Storage storage() {
        String path = System.getenv("TOKEN_FILE");
        return path == null || path.isEmpty() ? new MemoryStorage() : FileStorage.of(Path.of(path));
    }

    /** Routes a request: the app's pages, its login, and the kit's two sign-in handlers. */
    void handle(HttpExchange exchange) throws IOException {
        try {
            String route =
                    exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath();
            switch (route) {
                case "GET /" -> home(exchange);
                case "POST /login" -> login(exchange);
                case "POST /logout" -> logout(exchange);
                case "POST /connect" -> send(exchange, signIn.start(signInRequest(exchange)));
                case "GET /callback" -> send(exchange, signIn.callback(signInRequest(exchange)));
                case "POST /disconnect" -> disconnect(exchange);
                default -> text(exchange, 404, "not found");
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request failed", e);
            if (exchange.getResponseCode() == -1) text(exchange, 500, "the request failed");
        } finally {
            exchange.close();
        }
    }

    /** What {@link SignInHandlers} needs of the request: the logged-in user names the session. */
    SignInHandlers.Request signInRequest(HttpExchange exchange) {
        return SignInHandlers.Request.of(
                exchange.getRequestMethod(),
                exchange.getRequestURI().getRawPath(),
                exchange.getRequestURI().getRawQuery(),
                cookieHeaders(exchange),
                userOf(exchange)); // the app's logged-in user, never the request's query
    }

    /** Sends the handlers' answer: its status, headers and body. */
    static void send(HttpExchange exchange, SignInHandlers.Response answer) throws IOException {
        answer.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
        byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
        exchange.getResponseBody().write(body);
    }

    static List<String> cookieHeaders(HttpExchange exchange) {
        List<String> headers = exchange.getRequestHeaders().get("Cookie");
        return headers == null ? List.of() : headers;
    }

    /** The logged-in user of the request (the app's own login cookie), or null. */
    String userOf(HttpExchange exchange) {
        for (String login : loginCookies(exchange)) {
            String user = logins.get(login);
            if (user != null) return user;
        }
        return null;
    }

    /** The values of the request's login cookies. */
    static List<String> loginCookies(HttpExchange exchange) {
        List<String> values = new ArrayList<>();
        for (String header : cookieHeaders(exchange)) {
            for (String pair : header.split(";")) {
                int eq = pair.indexOf('=');
                if (eq > 0 && pair.substring(0, eq).trim().equals(LOGIN_COOKIE))
                    values.add(pair.substring(eq + 1).trim());
            }
        }
        return values;
    }

    void login(HttpExchange exchange) throws IOException {
        String name = formValue(exchange.getRequestBody(), "user");
        if (name == null || !USER_NAME.matcher(name).matches()) {
            text(exchange, 400, "a user name is 1 to 32 lowercase letters and digits");
            return;
        }
        byte[] random = new byte[32];
        RANDOM.nextBytes(random);
        String value = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        logins.put(value, name);
        exchange.getResponseHeaders()
                .add("Set-Cookie", LOGIN_COOKIE + "=" + value + "; Path=/; HttpOnly; SameSite=Lax");
        redirect(exchange, "/");
    }

    void logout(HttpExchange exchange) throws IOException {
        for (String login : loginCookies(exchange)) logins.remove(login);
        exchange.getResponseHeaders().add("Set-Cookie", LOGIN_COOKIE + "=; Path=/; Max-Age=0");
        redirect(exchange, "/");
    }

    /** Revokes the logged-in user's tenant session (RFC 7009) and forgets it. */
    void disconnect(HttpExchange exchange) throws IOException {
        String user = userOf(exchange);
        if (user != null) {
            try {
                sessions.revoke(user);
            } catch (TokenManagerException e) {
                LOG.log(System.Logger.Level.WARNING, "revocation failed: " + e.getMessage());
            }
        }
        redirect(exchange, "/");
    }

    /** The value of {@code name} in an {@code application/x-www-form-urlencoded} body, or null. */
    static String formValue(InputStream body, String name) throws IOException {
        String form = new String(body.readNBytes(4096), StandardCharsets.UTF_8);
        for (String pair : form.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0
                    && URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8)
                            .equals(name)) {
                return URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    static void redirect(HttpExchange exchange, String location) throws IOException {
        exchange.getResponseHeaders().add("Location", location);
        exchange.sendResponseHeaders(303, -1);
    }

    static void text(HttpExchange exchange, int status, String text) throws IOException {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    /** What the home page shows of the logged-in user's tenant account. */
    record Shown(boolean connected, String tenantUser, String problem) {}

    void home(HttpExchange exchange) throws IOException {
        String user = userOf(exchange);
        String html = Page.render(user, user == null ? null : tenantUser(user));
        byte[] body = html.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "text/html; charset=utf-8");
        exchange.getResponseHeaders().add("Cache-Control", "no-store");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
    }

    /** Asks the tenant who the user's connected account is, through the user's own session. */
    Shown tenantUser(String user) {
        try {
            if (!sessions.isSignedIn(user)) return new Shown(false, null, null);
            HttpClient client = sessions.httpClient(user); // that user's token, never another's
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create(tenant + "/api/v1/auth/user"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return new Shown(true, null, "the tenant answered " + response.statusCode());
            }
            return new Shown(true, response.body(), null);
        } catch (TokenManagerException e) {
            if (e.code() == ErrorCode.SESSION_ENDED || e.code() == ErrorCode.NOT_SIGNED_IN) {
                return new Shown(false, null, "the tenant session ended: connect again");
            }
            return new Shown(true, null, e.getMessage()); // a stable code and why, never a token
        } catch (IOException e) {
            return new Shown(true, null, "the tenant did not answer: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Shown(true, null, "interrupted");
        }
    }
}
