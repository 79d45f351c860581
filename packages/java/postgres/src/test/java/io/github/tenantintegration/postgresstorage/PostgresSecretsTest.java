package io.github.tenantintegration.postgresstorage;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
        List<String> records = new ArrayList<>();
        Path classes = Path.of("target/classes");
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name =
                        classes.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
                Class<?> type = Class.forName(name, false, getClass().getClassLoader());
                if (!type.isRecord()) continue;
                records.add(type.getSimpleName());
                boolean secret = Stream.of(type.getRecordComponents())
                        .anyMatch(c -> SECRET.matcher(c.getName()).matches());
                if (!secret) continue;
                assertTrue(
                        Stream.of(type.getDeclaredMethods())
                                .anyMatch(m -> m.getName().equals("toString")
                                        && m.getParameterCount() == 0
                                        // javac's generated toString of a record is final; a written one is not
                                        && !java.lang.reflect.Modifier.isFinal(m.getModifiers())),
                        type.getName() + " holds a secret and prints every component");
            }
        }
        // The scan saw the module's records (a row's key, the scope, the table, the options).
        assertTrue(records.containsAll(List.of("Row", "Scope", "Table", "Options", "Keepalives")), records.toString());
        // The storage and the lock's options hold no value; a row is described by its key alone.
        Rows.Row row = new Rows.Row("https://acme.tenant.test", "demo", "42", "tokens");
        assertFalse(row.toString().contains("value"));
        assertTrue(Stream.of(PostgresStorage.class.getDeclaredFields())
                .noneMatch(f -> SECRET.matcher(f.getName()).matches()));
    }
}
