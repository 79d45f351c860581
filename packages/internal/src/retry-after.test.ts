import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "./retry-after.js";

const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);

describe("parseRetryAfter (RFC 9110 §10.2.3)", () => {
  it("reads delay-seconds", () => {
    expect(parseRetryAfter("120", NOW)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", NOW)).toBe(0);
  });

  it("reads an IMF-fixdate relative to now", () => {
    expect(parseRetryAfter("Wed, 01 Jan 2025 12:00:07 GMT", NOW)).toBe(7000);
  });

  it("reads the obsolete RFC 850 form", () => {
    expect(parseRetryAfter("Wednesday, 01-Jan-25 12:00:02 GMT", NOW)).toBe(2000);
  });

  it("gives 0 for a date in the past", () => {
    expect(parseRetryAfter("Wed, 01 Jan 2025 11:00:00 GMT", NOW)).toBe(0);
  });

  it("ignores absent, negative, fractional and unreadable values, and dates Date.parse reads that are not HTTP dates", () => {
    for (const value of [null, "", "-1", "1.5", "soon", "2025-01-01", "5 May 2025", "1 Jan"])
      expect(parseRetryAfter(value, NOW), String(value)).toBeUndefined();
  });
});
