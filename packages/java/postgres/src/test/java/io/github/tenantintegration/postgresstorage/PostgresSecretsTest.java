package io.github.tenantintegration.postgresstorage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tokenmanager.SecretRecords;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The token manager's SecretsTest, for this module: no type prints a token. */
class PostgresSecretsTest {
    /** A record component that holds a secret, by its name (the token manager's list, and a row's value). */
    private static final Pattern SECRET = Pattern.compile(
            "(?i)^(accessToken|refreshToken|token|code|verifier|codeVerifier|state|url|value|password)$");

    @Test
    void everyRecordHoldingASecretOverridesToStringAndTheStorageCarriesNone() throws Exception {
        List<String> records =
                SecretRecords.check(SECRET, getClass().getClassLoader()).records();
        // The scan saw the module's records (a row's key, the scope, the table, the options).
        assertTrue(records.containsAll(List.of("Row", "Scope", "Table", "Options", "Keepalives")), records.toString());
        // The storage and the lock's options hold no value; a row is described by its key alone.
        Rows.Row row = new Rows.Row("https://acme.tenant.test", "demo", "42", "tokens");
        assertFalse(row.toString().contains("value"));
        assertTrue(Stream.of(PostgresStorage.class.getDeclaredFields())
                .noneMatch(f -> SECRET.matcher(f.getName()).matches()));
    }
}
