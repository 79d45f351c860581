package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.internal.ProcessIdentity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The records the Java manager writes are those of spec/token-store, as its JSON Schemas say. */
class TokenStoreSchemaTest {
    private static final Path SCHEMAS = Path.of("..", "..", "..", "spec", "token-store");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static Set<ValidationMessage> check(String schema, String value) throws Exception {
        JsonSchema compiled = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(Files.readString(SCHEMAS.resolve(schema)));
        return compiled.validate(JSON.readTree(value));
    }

    @Test
    void theTokenPendingAndIntentRecordsAndTheTokenFileValidate() throws Exception {
        TestClock clock = new TestClock();
        Path file = dir.resolve("tokens.json");
        FileStorage storage = FileStorage.of(file);
        try (FakeTenant tenant = new FakeTenant()) {
            TokenManager manager =
                    tenant.manager().clock(clock).storage(storage).build();
            AuthorizationRequest request = manager.beginAuthorization();
            String state = request.url().getRawQuery().replaceAll(".*[?&]?state=([^&]*).*", "$1");
            String pendingKey = "tenant-integration:" + tenant.url() + ":demo:pending:" + Pending.key(state);
            assertEquals(
                    Set.of(),
                    check("pending-record.schema.json", storage.get(pendingKey).orElseThrow()));
            FakeTenant.signIn(manager);
            String tokensKey = "tenant-integration:" + tenant.url() + ":demo:tokens";
            assertEquals(
                    Set.of(),
                    check("token-record.schema.json", storage.get(tokensKey).orElseThrow()));
            clock.advance(Duration.ofMinutes(16));
            manager.accessToken();
            assertEquals(
                    Set.of(),
                    check("token-record.schema.json", storage.get(tokensKey).orElseThrow()));
            assertEquals(Set.of(), check("token-file.schema.json", Files.readString(file)));
        }
        IntentRecord intent = new IntentRecord(
                TokenRecord.fingerprint("rt"),
                States.random(),
                1_700_000_000_000L,
                ProcessIdentity.pid(),
                ProcessIdentity.host());
        assertEquals(Set.of(), check("intent-record.schema.json", intent.serialize()));
        // The check can fail: a record without its session is refused by the schema.
        assertFalse(
                check("token-record.schema.json", "{\"access_token\":\"a\"}").isEmpty());
        assertTrue(Files.isDirectory(SCHEMAS));
    }
}
