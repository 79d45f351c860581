import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { constantTimeEqual, createState } from "./state.js";

describe("createState", () => {
  it("carries 256 random bits as 43 base64url characters", () => {
    let asked = 0;
    const state = createState((out) => {
      asked += out.length;
      return crypto.getRandomValues(out);
    });
    expect(asked * 8).toBeGreaterThanOrEqual(128);
    expect(asked).toBe(32);
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("encodes every random input losslessly, so distinct bytes give distinct states", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (a, b) => {
          const sa = createState((out) => (out.set(a), out));
          const sb = createState((out) => (out.set(b), out));
          expect(sa === sb).toBe(Buffer.from(a).equals(Buffer.from(b)));
          expect(Buffer.from(sa, "base64url")).toEqual(Buffer.from(a));
        },
      ),
    );
  });

  it("never repeats over many calls with the default source", () => {
    const seen = new Set(Array.from({ length: 1000 }, () => createState()));
    expect(seen.size).toBe(1000);
  });
});

describe("constantTimeEqual", () => {
  it("is true exactly when the strings are equal", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(constantTimeEqual(a, b)).toBe(a === b);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (a) => {
        expect(constantTimeEqual(a, a)).toBe(true);
      }),
    );
  });

  it("rejects a value that differs by one character, or is a prefix", () => {
    const s = createState();
    const flipped = s.slice(0, -1) + (s.endsWith("A") ? "B" : "A");
    expect(constantTimeEqual(flipped, s)).toBe(false);
    expect(constantTimeEqual(s.slice(0, -1), s)).toBe(false);
    expect(constantTimeEqual(`${s}x`, s)).toBe(false);
    expect(constantTimeEqual("", s)).toBe(false);
  });
});
