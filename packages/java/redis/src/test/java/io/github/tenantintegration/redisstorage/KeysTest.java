package io.github.tenantintegration.redisstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.internal.Json;
import io.lettuce.core.cluster.SlotHash;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Redis keys, wake-up channels and cluster slots of sessions and pending sign-ins are those of
 * {@code spec/token-store/vectors/sessions.json}, which every kit's tests read.
 */
class KeysTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> vectors() throws Exception {
        String text = Files.readString(Path.of("..", "..", "..", "spec", "token-store", "vectors", "sessions.json"));
        return (Map<String, Object>) Json.parse(text).orElseThrow();
    }

    @Test
    @SuppressWarnings("unchecked")
    void sessionsAndPendingSignInsMapToTheSharedKeys() throws Exception {
        Map<String, Object> vectors = vectors();
        int checked = 0;
        for (Object each : (List<Object>) vectors.get("scopes")) {
            Map<String, Object> scope = (Map<String, Object>) each;
            String prefix = (String) scope.get("prefix");
            Map<String, Object> names = (Map<String, Object>) scope.get("names");
            Map<String, Object> keys = (Map<String, Object>) scope.get("redisKeys");
            for (String kind : names.keySet()) {
                String key = Keys.key(prefix, (String) names.get(kind));
                assertEquals(keys.get(kind), key, kind);
                assertEquals(((Number) scope.get("slot")).intValue(), SlotHash.getSlot(key), kind);
                checked++;
            }
            assertEquals(scope.get("channel"), Keys.releasedChannel(Keys.key(prefix, (String) names.get("lock"))));
        }
        for (Object each : (List<Object>) vectors.get("pending")) {
            Map<String, Object> pending = (Map<String, Object>) each;
            String key = Keys.key((String) pending.get("prefix"), (String) pending.get("name"));
            assertEquals(pending.get("redisKey"), key);
            assertEquals(((Number) pending.get("slot")).intValue(), SlotHash.getSlot(key));
            checked++;
        }
        assertTrue(checked > 10);
    }
}
