package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.tenantintegration.filestorage.FileStorage;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The session id rule, names, lock directories, pending keys, pending records and browser bindings
 * are those of {@code spec/token-store/vectors/sessions.json}, which every kit's tests read.
 */
class SessionIdTest {
    static final JsonNode VECTORS = read();

    private static JsonNode read() {
        try {
            return new ObjectMapper()
                    .readTree(Path.of("..", "..", "..", "spec", "token-store", "vectors", "sessions.json")
                            .toFile());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void validIdsAreTakenAndInvalidOnesRefusedWithTheSharedMessage() {
        int valid = 0;
        for (JsonNode v : VECTORS.get("sessionIds").get("valid")) {
            String id = v.get("id").asText();
            assertDoesNotThrow(() -> SessionId.check(id), v.get("note").asText());
            assertTrue(SessionId.isValid(id));
            valid++;
        }
        int invalid = 0;
        for (JsonNode v : VECTORS.get("sessionIds").get("invalid")) {
            String id = v.get("id").asText();
            TokenManagerException e = assertThrows(TokenManagerException.class, () -> SessionId.check(id));
            assertEquals(ErrorCode.INVALID_SESSION_ID, e.code(), v.get("note").asText());
            assertEquals(
                    "INVALID_SESSION_ID: " + v.get("message").asText(),
                    e.getMessage(),
                    v.get("note").asText());
            assertFalse(SessionId.isValid(id));
            invalid++;
        }
        assertTrue(valid >= 10 && invalid >= 10);
        assertEquals(
                ErrorCode.INVALID_SESSION_ID,
                assertThrows(TokenManagerException.class, () -> SessionId.check(null))
                        .code());
    }

    @Test
    void aManagerRefusesAnInvalidIdBeforeBuildingAnything() {
        TokenManagerException e = assertThrows(
                TokenManagerException.class,
                () -> TokenManager.builder("https://acme.tenant.test", "demo", "http://127.0.0.1:53682/callback")
                        .sessionId("a:b"));
        assertEquals(ErrorCode.INVALID_SESSION_ID, e.code());
    }

    @Test
    void aManagerNamesItsRecordsAndLocksAsEveryKitDoes() {
        for (JsonNode scope : VECTORS.get("scopes")) {
            JsonNode session = scope.get("session");
            FileStorage file = FileStorage.of(Path.of(scope.get("file").asText()));
            TokenManager.Builder builder = TokenManager.builder(
                            scope.get("origin").asText(),
                            scope.get("clientId").asText(),
                            "http://127.0.0.1:53682/callback")
                    .scopes(io.github.tenantintegration.api.Scope.PROFILE_READ)
                    .storage(file);
            if (!session.isNull()) builder = builder.sessionId(session.asText());
            TokenManager m = builder.build();
            JsonNode names = scope.get("names");
            assertEquals(names.get("tokens").asText(), m.tokensKey);
            assertEquals(names.get("intent").asText(), m.intentKey);
            assertEquals(names.get("lock").asText(), m.lockName);
            String refresh = scope.get("fileLocks").get("refresh").asText();
            if (session.isNull()) {
                assertEquals(refresh, file.path() + ".refresh.lock");
            } else {
                assertEquals(refresh, file.sessionLockDirectory(m.lockName).toString());
            }
        }
    }

    @Test
    void pendingSignInsAreKeyedByTheirStatesHash() {
        for (JsonNode p : VECTORS.get("pending")) {
            assertEquals(p.get("key").asText(), Pending.key(p.get("state").asText()));
            Pending pending = new Pending(
                    new MemoryStorage(),
                    System.getLogger("test"),
                    p.get("origin").asText(),
                    p.get("clientId").asText());
            assertEquals(p.get("name").asText(), pending.name(p.get("state").asText()));
        }
    }

    @Test
    void pendingRecordsAreWrittenAndReadAsEveryKitDoes() {
        for (JsonNode r : VECTORS.get("pendingRecords")) {
            Optional<PendingRecord> parsed = PendingRecord.parse(r.get("text").asText());
            assertEquals(
                    r.get("valid").asBoolean(),
                    parsed.isPresent(),
                    r.get("note").asText());
            if (parsed.isPresent())
                assertEquals(r.get("text").asText(), parsed.get().serialize());
        }
    }

    @Test
    void theBrowserBindingIsHashedAndCheckedByTheSharedRule() {
        for (JsonNode b : VECTORS.get("bindings")) {
            assertEquals(
                    b.get("browser").asText(), Binding.hash(b.get("binding").asText()));
        }
        for (JsonNode c : VECTORS.get("bindingChecks")) {
            String browser = c.get("browser").isNull() ? null : c.get("browser").asText();
            String binding = c.get("binding").isNull() ? null : c.get("binding").asText();
            if (c.get("outcome").asText().equals("accept")) {
                assertDoesNotThrow(
                        () -> Binding.check(browser, binding), c.get("note").asText());
            } else {
                TokenManagerException e =
                        assertThrows(TokenManagerException.class, () -> Binding.check(browser, binding));
                assertEquals(
                        c.get("outcome").asText(),
                        e.code().name(),
                        c.get("note").asText());
            }
        }
        assertEquals(43, Binding.random().length());
    }
}
