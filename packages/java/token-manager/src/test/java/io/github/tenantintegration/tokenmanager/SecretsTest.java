package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.api.Scope;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** No token, code, verifier or state in any toString, message or log line. */
class SecretsTest {
    /** A record component or field that holds a secret, by its name. */
    private static final Pattern SECRET =
            Pattern.compile("(?i)^(accessToken|refreshToken|token|code|verifier|codeVerifier|state|url)$");

    @Test
    void everyRecordHoldingASecretOverridesToString() throws Exception {
        SecretRecords.Scan scan = SecretRecords.check(SECRET, getClass().getClassLoader());
        assertTrue(
                scan.holdingSecrets()
                        .containsAll(List.of("PendingRecord", "Fields", "PkcePair", "AuthorizationRequest")),
                scan.holdingSecrets().toString());
    }

    @Test
    void theTypesHoldingASecretPrintNone() {
        String secret = "SECRET_abcdefghijklmnop";
        PkcePair pair = PkcePair.generate(64);
        List<Object> values = List.of(
                pair,
                new PendingRecord(secret, pair.verifier(), 1, "42", Binding.hash(secret)),
                new Sessions.Started(null, "42", secret),
                new Sessions.Callback("https://app.example/cb?state=" + secret, secret, "42"),
                new TokenRecord(secret, secret, "Bearer", 900, null, 1, "a".repeat(43), "a".repeat(43), 0),
                new TokenRecord.Fields(secret, secret, "Bearer", 900, null),
                new AuthorizationRequest(
                        URI.create("https://t.example/oauth/authorize?state=" + secret),
                        Instant.EPOCH,
                        List.of(Scope.PROFILE_READ),
                        "http://127.0.0.1:1/cb"),
                new TokenHttp.Answer(200, secret, Optional.empty()));
        for (Object value : values) {
            assertFalse(value.toString().contains(secret), value.getClass().getSimpleName() + ": " + value);
            assertFalse(
                    value.toString().contains(pair.verifier()), value.getClass().getSimpleName() + ": " + value);
        }
        MemoryStorage storage = new MemoryStorage();
        storage.set("tenant-integration:x:tokens", secret);
        assertFalse(storage.toString().contains(secret));
    }

    /** A System.Logger keeping every message, at every level. */
    static final class Capture implements System.Logger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "capture";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
            lines.add(message + (thrown == null ? "" : " " + thrown));
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(format);
        }
    }

    @Test
    void noLogLineNorErrorHoldsATokenCodeVerifierOrState() throws Exception {
        Capture logger = new Capture();
        TestClock clock = new TestClock();
        List<String> said = new ArrayList<>();
        try (FakeTenant tenant = new FakeTenant()) {
            TokenManager manager = tenant.manager()
                    .clock(clock)
                    .logger(logger)
                    .retryDelay(Duration.ZERO)
                    .build();
            AuthorizationRequest request = manager.beginAuthorization();
            String state = request.url().getRawQuery().replaceAll(".*state=([^&]*).*", "$1");
            manager.completeAuthorization(manager.redirectUri() + "?code=code_abcdefghij&state=" + state);
            String first = manager.accessToken();
            String firstRefresh = tenant.refreshToken;
            clock.advance(Duration.ofMinutes(16));
            tenant.answers.add(FakeTenant.Answer.of(503, "{}"));
            String second = manager.accessToken();
            clock.advance(Duration.ofMinutes(16));
            // The tenant echoes the refresh token in its error: it is redacted in the error and the log.
            tenant.answers.add(FakeTenant.Answer.of(
                    400, "{\"error\":\"invalid_grant\",\"error_description\":\"bad " + tenant.refreshToken + "\"}"));
            String lastRefresh = tenant.refreshToken;
            try {
                manager.accessToken();
            } catch (SessionEndedException e) {
                said.add(e.getMessage());
                said.add(e.errorDescription());
                said.add(String.valueOf(e));
            }
            said.addAll(logger.lines);
            said.add(manager.toString());
            assertTrue(logger.lines.size() > 5, logger.lines.toString());
            for (String line : said) {
                for (String secret : List.of(first, second, firstRefresh, lastRefresh, "code_abcdefghij", state)) {
                    assertFalse(line != null && line.contains(secret), "\"" + line + "\" holds a secret");
                }
            }
        }
    }
}
