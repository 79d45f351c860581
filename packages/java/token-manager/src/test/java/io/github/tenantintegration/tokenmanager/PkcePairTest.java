package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PkcePairTest {
    @Test
    void theS256ChallengeIsRfc7636AppendixBs() {
        assertEquals(
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                PkcePair.challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
    }

    @Test
    void verifiersHaveTheAskedLengthOfUnreservedCharactersAndDiffer() {
        for (int length : new int[] {43, 64, 128}) {
            PkcePair pair = PkcePair.generate(length);
            assertEquals(length, pair.verifier().length());
            assertTrue(pair.verifier().matches("[A-Za-z0-9._~-]+"));
            assertEquals(PkcePair.challenge(pair.verifier()), pair.challenge());
        }
        assertNotEquals(PkcePair.generate(64).verifier(), PkcePair.generate(64).verifier());
    }

    @Test
    void aLengthOutside43To128IsRefused() {
        assertEquals(
                ErrorCode.INVALID_VERIFIER,
                assertThrows(TokenManagerException.class, () -> PkcePair.generate(42))
                        .code());
        assertEquals(
                ErrorCode.INVALID_VERIFIER,
                assertThrows(TokenManagerException.class, () -> PkcePair.generate(129))
                        .code());
    }

    @Test
    void aMalformedVerifierIsRefusedWithoutBeingQuoted() {
        String bad = "has spaces in it but is long enough to be a verifier otherwise!!";
        TokenManagerException e = assertThrows(TokenManagerException.class, () -> PkcePair.challenge(bad));
        assertEquals(ErrorCode.INVALID_VERIFIER, e.code());
        assertFalse(e.getMessage().contains(bad));
    }
}
