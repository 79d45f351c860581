package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.internal.Json;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TokenRecordTest {
    private static final String ID = "a".repeat(43);
    private static final String SESSION = "b".repeat(43);

    /** What the TypeScript manager's JSON.stringify writes for a record: the same bytes. */
    private static final String TYPESCRIPT =
            "{\"access_token\":\"at_1\",\"refresh_token\":\"rt_1\",\"token_type\":\"Bearer\","
                    + "\"expires_in\":900,\"scope\":\"profile:read\",\"received_at\":1700000000000,\"id\":\"" + ID
                    + "\",\"session\":\""
                    + SESSION + "\",\"seq\":3}";

    @Test
    void aRecordIsWrittenByteForByteAsTheOtherKitsWriteIt() {
        TokenRecord record = TokenRecord.parse(TYPESCRIPT).orElseThrow();
        assertEquals(TYPESCRIPT, record.serialize());
        TokenRecord withoutScope = new TokenRecord("at", "rt", "bearer", 900, null, 1, ID, SESSION, 0);
        assertEquals(
                "{\"access_token\":\"at\",\"refresh_token\":\"rt\",\"token_type\":\"bearer\",\"expires_in\":900,\"received_at\":1,"
                        + "\"id\":\"" + ID + "\",\"session\":\"" + SESSION + "\",\"seq\":0}",
                withoutScope.serialize());
    }

    @Test
    void aRecordMissingARequiredFieldIsNoSession() {
        for (String field : new String[] {
            "access_token", "refresh_token", "token_type", "expires_in", "received_at", "id", "session", "seq"
        }) {
            Map<String, Object> members =
                    new java.util.LinkedHashMap<>(Json.parseObject(TYPESCRIPT).orElseThrow());
            members.remove(field);
            assertTrue(TokenRecord.parse(Json.write(members)).isEmpty(), field);
        }
        assertTrue(TokenRecord.parse("not json").isEmpty());
        assertTrue(TokenRecord.parse(TYPESCRIPT.replace("Bearer", "MAC")).isEmpty());
        assertTrue(
                TokenRecord.parse(TYPESCRIPT.replace("\"seq\":3", "\"seq\":-1")).isEmpty());
    }

    @Test
    void freshMeansYoungerThanTheLifetimeLessTheLeeway() {
        TokenRecord record = new TokenRecord("at", "rt", "Bearer", 900, null, 1_000_000, ID, SESSION, 0);
        assertTrue(record.fresh(1_000_000 + 839_000, 60_000));
        assertFalse(record.fresh(1_000_000 + 840_000, 60_000));
        // The leeway is at most half the lifetime.
        assertTrue(record.fresh(1_000_000 + 449_000, 3_600_000));
        assertFalse(record.fresh(1_000_000 + 450_000, 3_600_000));
    }

    @Test
    void aRecordStampedInTheReadersFutureCountsAsReceivedNowUnlessTooFarAhead() {
        TokenRecord ahead = new TokenRecord("at", "rt", "Bearer", 900, null, 2_000_000, ID, SESSION, 0);
        assertTrue(ahead.fresh(1_500_000, 60_000));
        assertEquals(1_500_000 + 900_000, ahead.expiresAtMs(1_500_000));
        assertFalse(ahead.fresh(2_000_000 - 900_001, 60_000));
    }

    @Test
    void aStoredRecordSupersedesOursByIdSessionAndSeq() {
        TokenRecord ours = new TokenRecord("at", "rt", "Bearer", 900, null, 10, ID, SESSION, 2);
        assertTrue(TokenRecord.supersedes(ours, ours));
        assertTrue(TokenRecord.supersedes(
                new TokenRecord("x", "y", "Bearer", 900, null, 5, "c".repeat(43), SESSION, 2), ours));
        assertFalse(TokenRecord.supersedes(
                new TokenRecord("x", "y", "Bearer", 900, null, 50, "c".repeat(43), SESSION, 1), ours));
        assertTrue(TokenRecord.supersedes(
                new TokenRecord("x", "y", "Bearer", 900, null, 5, "c".repeat(43), "d".repeat(43), 0), ours));
    }

    @Test
    void theFingerprintIsTheLowercaseHexSha256() {
        assertEquals(
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", TokenRecord.fingerprint("abc"));
    }

    @Test
    void anIntentIsWrittenInTheFormatsOrderAndAForeignValueIsNoIntent() {
        IntentRecord intent = new IntentRecord("0".repeat(64), ID, 17, 123, "host-a");
        assertEquals(
                "{\"fingerprint\":\"" + "0".repeat(64) + "\",\"holder\":\"" + ID
                        + "\",\"since\":17,\"pid\":123,\"host\":\"host-a\"}",
                intent.serialize());
        assertEquals(intent, IntentRecord.parse(intent.serialize()).orElseThrow());
        assertTrue(IntentRecord.parse("{\"fingerprint\":\"x\",\"holder\":\"" + ID + "\",\"since\":1}")
                .isEmpty());
        assertTrue(IntentRecord.parse("{\"hello\":1}").isEmpty());
        assertTrue(IntentRecord.parse("[]").isEmpty());
    }
}
