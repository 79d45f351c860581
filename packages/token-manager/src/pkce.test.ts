import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { failure } from "./test-support/failure.js";
import { createPkcePair, deriveCodeChallenge } from "./pkce.js";

const UNRESERVED = /^[A-Za-z0-9\-._~]+$/;

describe("deriveCodeChallenge", () => {
  it("gives the challenge of RFC 7636 Appendix B for its verifier", async () => {
    await expect(deriveCodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).resolves.toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("equals BASE64URL(SHA256(verifier)) for any valid verifier", async () => {
    const verifier = fc.stringMatching(/^[A-Za-z0-9\-._~]{43,128}$/);
    await fc.assert(
      fc.asyncProperty(verifier, async (v) => {
        const expected = createHash("sha256").update(v).digest("base64url");
        expect(await deriveCodeChallenge(v)).toBe(expected);
      }),
    );
  });

  it("rejects a verifier shorter than 43, longer than 128 or with another character, without echoing it", async () => {
    const invalid = fc
      .string({ unit: "grapheme", maxLength: 200 })
      .filter((s) => !/^[A-Za-z0-9\-._~]{43,128}$/.test(s));
    await fc.assert(
      fc.asyncProperty(invalid, async (v) => {
        const error = await deriveCodeChallenge(v).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toEqual(failure("INVALID_VERIFIER"));
        if (v.length > 3) expect((error as Error).message).not.toContain(v);
      }),
    );
  });

  it("rejects 42 and 129 characters and accepts 43 and 128", async () => {
    await expect(deriveCodeChallenge("a".repeat(42))).rejects.toThrow(failure("INVALID_VERIFIER"));
    await expect(deriveCodeChallenge("a".repeat(129))).rejects.toThrow(failure("INVALID_VERIFIER"));
    await expect(deriveCodeChallenge("a".repeat(43))).resolves.toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expect(deriveCodeChallenge("a".repeat(128))).resolves.toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("createPkcePair", () => {
  it("returns an S256 pair whose challenge derives from its verifier", async () => {
    const pair = await createPkcePair();
    expect(pair.method).toBe("S256");
    expect(pair.verifier).toMatch(/^[A-Za-z0-9\-._~]{64}$/);
    expect(pair.challenge).toBe(await deriveCodeChallenge(pair.verifier));
  });

  it("makes a verifier of the requested length from unreserved characters, for any length 43–128", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 43, max: 128 }), async (length) => {
        const { verifier, challenge } = await createPkcePair({ length });
        expect(verifier).toHaveLength(length);
        expect(verifier).toMatch(UNRESERVED);
        expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      }),
      { numRuns: 50 },
    );
  });

  it("makes a verifier of the requested length from any random bytes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.integer({ min: 43, max: 128 }),
        async (bytes, length) => {
          // A source that cycles through arbitrary bytes, with at least one usable byte.
          const pool = [...bytes, 7];
          let i = 0;
          const random = (out: Uint8Array) => out.map(() => pool[i++ % pool.length] ?? 0);
          const { verifier } = await createPkcePair({ length, random });
          expect(verifier).toHaveLength(length);
          expect(verifier).toMatch(UNRESERVED);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("is the standard base64url of the random bytes, cut to the length, from ceil(length × 3 / 4) bytes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 43, max: 128 }),
        fc.uint8Array({ minLength: 96, maxLength: 96 }),
        async (length, bytes) => {
          const requested: number[] = [];
          const random = (out: Uint8Array) => (requested.push(out.length), out.set(bytes.subarray(0, out.length)), out);
          const { verifier } = await createPkcePair({ length, random });
          expect(requested).toEqual([Math.ceil((length * 3) / 4)]);
          // Enough bits for every character: none is made from base64's zero padding.
          expect(8 * (requested[0] ?? 0)).toBeGreaterThanOrEqual(6 * length);
          expect(verifier).toBe(Buffer.from(bytes.subarray(0, requested[0])).toString("base64url").slice(0, length));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("has no modulo bias: the 64 values of a character's 6 bits give the 64 base64url characters, each once", async () => {
    const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const firsts: string[] = [];
    for (let v = 0; v < 64; v++) {
      // The first character is the top 6 bits of the first byte; the rest are zeros ("A").
      const random = (out: Uint8Array) => (out.fill(0), (out[0] = v << 2), out);
      const { verifier } = await createPkcePair({ length: 43, random });
      expect(verifier.slice(1)).toBe("A".repeat(42));
      firsts.push(verifier.charAt(0));
    }
    expect(firsts.join("")).toBe(BASE64URL);
    expect(BASE64URL).toMatch(UNRESERVED);
  });

  it("draws even the last character from random bits, for every length", async () => {
    const ones = (out: Uint8Array) => out.fill(255);
    for (let length = 43; length <= 128; length++) {
      // All-one bits give "_" (63) everywhere; a character padded with zero bits would differ.
      expect((await createPkcePair({ length, random: ones })).verifier).toBe("_".repeat(length));
    }
  });

  it("rejects a length outside 43–128 with a typed error", async () => {
    await expect(createPkcePair({ length: 42 })).rejects.toThrow(failure("INVALID_VERIFIER"));
    await expect(createPkcePair({ length: 129 })).rejects.toThrow(failure("INVALID_VERIFIER"));
    await expect(createPkcePair({ length: 50.5 })).rejects.toThrow(failure("INVALID_VERIFIER"));
  });

  it("never returns the same verifier twice", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add((await createPkcePair()).verifier);
    expect(seen.size).toBe(200);
  });
});
