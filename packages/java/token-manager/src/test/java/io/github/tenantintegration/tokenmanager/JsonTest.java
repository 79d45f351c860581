package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.internal.Json;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void readsWhatJsonStringifyWritesAndWritesItBack() {
        String text =
                "{\"a\":\"x\\\"y\\\\z\\n\\u0001\",\"b\":[1,2.5,true,false,null],\"c\":{\"d\":-0.25e2},\"e\":9007199254740993}";
        Map<String, Object> value = Json.parseObject(text).orElseThrow();
        assertEquals("x\"y\\z\n\u0001", value.get("a"));
        assertEquals(List.of(1L, 2.5, true, false, Json.NULL), value.get("b"));
        assertEquals(
                "{\"a\":\"x\\\"y\\\\z\\n\\u0001\",\"b\":[1,2.5,true,false,null],\"c\":{\"d\":-25},\"e\":9007199254740992}",
                Json.write(value));
    }

    @Test
    void refusesWhatIsNotExactlyOneJsonValue() {
        for (String bad :
                new String[] {"", "{", "{\"a\":1}x", "{'a':1}", "[1,]", "01", "\"\t\"", "{\"a\" 1}", "nul", "1e999"}) {
            assertTrue(Json.parse(bad).isEmpty(), bad);
        }
    }

    @Test
    void leavesOutANullMemberAsJsonStringifyLeavesOutUndefined() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("a", 1);
        value.put("b", null);
        value.put("c", Json.NULL);
        assertEquals("{\"a\":1,\"c\":null}", Json.write(value));
    }

    @Test
    void escapesLoneSurrogatesAsEs2019Does() {
        assertEquals("\"\\ud800\uD83D\uDE00\"", Json.write("\uD800\uD83D\uDE00"));
    }
}
