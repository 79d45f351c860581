import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { failure } from "./testing/failure.js";
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
    const invalid = fc.string({ unit: "grapheme", maxLength: 200 }).filter((s) => !/^[A-Za-z0-9\-._~]{43,128}$/.test(s));
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
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.integer({ min: 43, max: 128 }), async (bytes, length) => {
        // A source that cycles through arbitrary bytes, with at least one usable byte.
        const pool = [...bytes, 7];
        let i = 0;
        const random = (out: Uint8Array) => out.map(() => pool[i++ % pool.length] ?? 0);
        const { verifier } = await createPkcePair({ length, random });
        expect(verifier).toHaveLength(length);
        expect(verifier).toMatch(UNRESERVED);
      }),
      { numRuns: 50 },
    );
  });

  it("has no modulo bias: the byte values 0–197 map to each of the 66 characters exactly 3 times", async () => {
    const counts = new Map<string, number>();
    for (let b = 0; b < 198; b++) {
      // The first byte decides the first character; the rest are zeros ("A").
      const random = (out: Uint8Array) => (out.fill(0), (out[0] = b), out);
      const { verifier } = await createPkcePair({ length: 43, random });
      const first = verifier.charAt(0);
      counts.set(first, (counts.get(first) ?? 0) + 1);
    }
    expect(counts.size).toBe(66);
    expect(new Set(counts.values())).toEqual(new Set([3]));
  });

  it("never uses a byte ≥ 198 (those would bias the first characters)", async () => {
    const random = (out: Uint8Array) => out.map((_, i) => (i % 2 === 0 ? 250 : 1));
    const { verifier } = await createPkcePair({ length: 43, random });
    expect(verifier).toBe("B".repeat(43));
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
