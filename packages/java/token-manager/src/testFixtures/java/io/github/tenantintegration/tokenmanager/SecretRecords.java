package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The check each module's SecretsTest makes of its own classes, written once (a test fixture,
 * src/testFixtures, compiled with the storage modules' tests): a record prints every component, so a record holding a
 * secret must write its own {@code toString}.
 */
public final class SecretRecords {
    private SecretRecords() {}

    /** The simple names of the records scanned, and of those among them holding a secret. */
    public record Scan(List<String> records, List<String> holdingSecrets) {}

    /**
     * Asserts that every record compiled into this module's {@code target/classes} with a component
     * named by {@code secret} overrides {@code toString}.
     */
    public static Scan check(Pattern secret, ClassLoader loader) throws Exception {
        List<String> records = new ArrayList<>();
        List<String> holdingSecrets = new ArrayList<>();
        Path classes = Path.of("target/classes");
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name =
                        classes.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
                Class<?> type = Class.forName(name, false, loader);
                if (!type.isRecord()) continue;
                records.add(type.getSimpleName());
                if (Stream.of(type.getRecordComponents())
                        .noneMatch(c -> secret.matcher(c.getName()).matches())) continue;
                holdingSecrets.add(type.getSimpleName());
                assertTrue(
                        Stream.of(type.getDeclaredMethods())
                                .anyMatch(m -> m.getName().equals("toString")
                                        && m.getParameterCount() == 0
                                        // javac's generated toString of a record is final; a written one is not
                                        && !Modifier.isFinal(m.getModifiers())),
                        type.getName() + " holds a secret and prints every component");
            }
        }
        return new Scan(records, holdingSecrets);
    }
}
