package io.github.tenantintegration.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class RecordsTest {
    /** A component that holds a secret, named as the contract names them (tokens, the code, the verifier). */
    private static final Pattern SECRET = Pattern.compile("^(accessToken|refreshToken|token|code|codeVerifier)$");

    /** Every record of the generated package, found from its sources, so that a new one is not missed. */
    static List<Class<?>> records() throws IOException, ClassNotFoundException {
        List<Class<?>> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("src/main/java/io/github/tenantintegration/api"))) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString().replace(".java", "");
                if (name.equals("package-info")) continue;
                Class<?> type = Class.forName("io.github.tenantintegration.api." + name);
                if (type.isRecord()) out.add(type);
            }
        }
        return out;
    }

    @Test
    void noRecordPrintsATokenCodeOrVerifier() throws Exception {
        List<Class<?>> records = records();
        assertTrue(records.size() >= 8, "found the records: " + records);
        int withSecrets = 0;
        for (Class<?> type : records) {
            RecordComponent[] components = type.getRecordComponents();
            Object[] values = new Object[components.length];
            Class<?>[] types = new Class<?>[components.length];
            for (int i = 0; i < components.length; i++) {
                types[i] = components[i].getType();
                values[i] = sample(components[i]);
            }
            Object record = type.getDeclaredConstructor(types).newInstance(values);
            String printed = record.toString();
            for (RecordComponent component : components) {
                if (!SECRET.matcher(component.getName()).matches()) continue;
                withSecrets++;
                assertFalse(
                        printed.contains("SECRET-" + component.getName() + "-END"),
                        type.getSimpleName() + " prints " + printed);
                assertTrue(printed.contains(component.getName() + "=[redacted]"), printed);
            }
        }
        assertTrue(withSecrets >= 8, "the records with a secret were checked: " + withSecrets);
    }

    private static Object sample(RecordComponent component) {
        Class<?> type = component.getType();
        if (type == String.class) return "SECRET-" + component.getName() + "-END";
        if (type == int.class || type == Integer.class) return 900;
        if (type == long.class || type == Long.class) return 900L;
        if (type == double.class || type == Double.class) return 900.0;
        if (type == boolean.class || type == Boolean.class) return true;
        if (type == Map.class) return Map.of();
        throw new AssertionError("no sample for " + type);
    }

    @Test
    void aGrantIsWrittenAsTheContractsJsonInItsOrder() {
        var request = new AuthorizationCodeGrantRequest(
                "demo", "http://127.0.0.1:53682/callback", "c\"o\\de", "v".repeat(43));
        assertEquals(
                "{\"grant_type\":\"authorization_code\",\"client_id\":\"demo\",\"redirect_uri\":\"http://127.0.0.1:53682/callback\","
                        + "\"code\":\"c\\\"o\\\\de\",\"code_verifier\":\"" + "v".repeat(43) + "\"}",
                request.toJson());
        TokenRequest refresh = new RefreshTokenGrantRequest("rt_1", "demo", null);
        assertEquals("refresh_token", refresh.grantType());
        assertEquals(
                "{\"grant_type\":\"refresh_token\",\"refresh_token\":\"rt_1\",\"client_id\":\"demo\"}",
                refresh.toJson());
    }

    @Test
    void controlCharactersAndLoneSurrogatesAreEscapedAsJsonStringifyDoes() {
        var request = new RefreshTokenGrantRequest("a\u0001\n\t\uD800b\uD83D\uDE00", null, null);
        assertEquals(
                "{\"grant_type\":\"refresh_token\",\"refresh_token\":\"a\\u0001\\n\\t\\ud800b\uD83D\uDE00\"}",
                request.toJson());
    }

    @Test
    void aRequiredComponentCannotBeNull() {
        var thrown = assertThrows(NullPointerException.class, () -> new RefreshTokenGrantRequest(null, "demo", null));
        assertEquals("refreshToken", thrown.getMessage());
    }

    @Test
    void anAdditionalPropertyCannotShadowAComponent() {
        assertThrows(
                IllegalArgumentException.class, () -> new RevocationRequest("t", null, null, Map.of("token", "x")));
        var request = new RevocationRequest("t", "access_token", "demo", Map.of("extra", "1"));
        assertEquals(
                "{\"token\":\"t\",\"token_type_hint\":\"access_token\",\"client_id\":\"demo\",\"extra\":\"1\"}",
                request.toJson());
    }

    @Test
    void theUserIsAnOpenObject() {
        var fields = new java.util.LinkedHashMap<String, Object>();
        fields.put("id", 42);
        fields.put("nickname", null);
        User user = new User(fields);
        fields.put("id", 43);
        assertEquals(42, user.get("id"));
        assertTrue(user.fields().containsKey("nickname"));
        assertThrows(UnsupportedOperationException.class, () -> user.fields().put("x", 1));
    }

    @Test
    void scopesAreTheServicesNames() {
        assertEquals(37, Scope.values().length);
        assertEquals("profile:read", Scope.PROFILE_READ.toString());
        assertEquals(Optional.of(Scope.CUSTOM_FIELDS_WRITE), Scope.find("custom-fields:write"));
        assertEquals(Optional.empty(), Scope.find("profile:READ"));
        assertEquals("realtime area: connect", Scope.REALTIME_CONNECT.description());
        String all =
                String.join(" ", Stream.of(Scope.values()).map(Scope::value).toList());
        assertTrue(all.matches(Schemas.ScopeList.PATTERN));
    }

    @Test
    void theSchemasCarryTheContractsConstraints() {
        assertEquals(43, Schemas.CodeVerifier.MIN_LENGTH);
        assertEquals(128, Schemas.CodeVerifier.MAX_LENGTH);
        assertEquals(900, Schemas.AccessToken.LIFETIME_SECONDS);
        assertEquals(2_592_000, Schemas.RefreshToken.LIFETIME_SECONDS);
        assertTrue("Bearer".matches(Schemas.TokenType.PATTERN));
        assertTrue("bEaReR".matches(Schemas.TokenType.PATTERN));
        assertFalse("Bearer ".matches(Schemas.TokenType.PATTERN));
    }
}
