import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { sanitize, scrub } from "./redact.js";

const REDACTED = "[redacted]";

describe("scrub and sanitize", () => {
  it("replaces every occurrence of every secret", () => {
    expect(scrub("a at_1 b at_1 rt_2", ["at_1", "rt_2", ""])).toBe(`a ${REDACTED} b ${REDACTED} ${REDACTED}`);
  });

  it("matches a secret literally, even one with replacement patterns or regular expression characters", () => {
    expect(scrub("x $& y a.*b $$ z", ["$&", "a.*b", "$$"])).toBe(`x ${REDACTED} y ${REDACTED} ${REDACTED} z`);
    expect(scrub("aXb", ["a.b"])).toBe("aXb");
  });

  it("copies name and message of an error and its cause chain without the secrets or other fields", () => {
    const inner = Object.assign(new Error("refresh_token=rt_9 refused"), { body: "rt_9" });
    const outer = Object.assign(new TypeError("fetch failed for at_9", { cause: inner }), { request: { body: "rt_9" } });
    const clean = sanitize(outer, ["rt_9", "at_9"]);
    expect(clean.name).toBe("TypeError");
    expect(clean.message).toBe(`fetch failed for ${REDACTED}`);
    expect((clean.cause as Error).message).toBe(`refresh_token=${REDACTED} refused`);
    expect(inspect(clean, { depth: 20, showHidden: true })).not.toMatch(/rt_9|at_9/);
    expect(JSON.stringify(clean)).not.toMatch(/rt_9|at_9/);
  });

  it("handles non-errors and bounds the depth of a cyclic cause chain", () => {
    expect(sanitize("oops at_1", ["at_1"]).message).toBe(`oops ${REDACTED}`);
    expect(sanitize(undefined, []).message).toBe("undefined");
    const cyclic: { message: string; cause?: unknown } = { message: "loop" };
    cyclic.cause = cyclic;
    let depth = 0;
    for (let e: unknown = sanitize(cyclic, []); e instanceof Error; e = e.cause) depth++;
    expect(depth).toBe(5);
  });
});
