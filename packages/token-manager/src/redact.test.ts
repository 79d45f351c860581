import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { MIN_SECRET_PREFIX, sanitize, scrub, secretForms } from "./redact.js";

const REDACTED = "[redacted]";

/** Canary secrets with every character that encodings treat differently: + / = space " \ and more. */
const CANARIES = [
  'CANARY_at+/=="\\end_0123456789',
  "CANARY rt with spaces/and+plus==",
  "CANARY_'()*!~-._%41_percent-literal",
  'CANARY\\"quoted\\"/\\/\\\\x',
];

/** The ways a server may echo a secret the kit sent, each named. */
const ECHOES: Record<string, (s: string) => string> = {
  raw: (s) => s,
  "percent-encoded (encodeURIComponent)": (s) => encodeURIComponent(s),
  "form-encoded (URLSearchParams)": (s) => new URLSearchParams({ t: s }).toString().slice(2),
  "JSON-escaped": (s) => JSON.stringify(s).slice(1, -1),
};

/** Where a server may cut the echo: nowhere, one character short, or at the shortest scrubbed start. */
const CUTS: Record<string, (s: string) => string> = {
  whole: (s) => s,
  "one character short": (s) => s.slice(0, -1),
  "cut to half": (s) => s.slice(0, Math.max(MIN_SECRET_PREFIX, s.length >> 1)),
  [`cut to ${MIN_SECRET_PREFIX} characters`]: (s) => s.slice(0, MIN_SECRET_PREFIX),
};

describe("scrub: the canary matrix", () => {
  for (const secret of CANARIES) {
    for (const [echo, encode] of Object.entries(ECHOES)) {
      for (const [cut, shorten] of Object.entries(CUTS)) {
        it(`scrubs ${JSON.stringify(secret)} echoed ${echo}, ${cut}`, () => {
          const echoed = shorten(encode(secret));
          const text = `error: got «${echoed}» back`;
          expect(scrub(text, ["other-secret", secret])).toBe(`error: got «${REDACTED}» back`);
        });
      }
    }
  }

  it("scrubs a secret echoed inside a JSON-escaped form body, as a server quoting the whole request would", () => {
    const secret = CANARIES[0]!;
    const body = new URLSearchParams({ token: secret, client_id: "demo" }).toString();
    const quoted = JSON.stringify({ error_description: `bad request: ${body}` });
    expect(scrub(quoted, [secret])).not.toMatch(/CANARY/);
  });
});

describe("scrub", () => {
  it("replaces every occurrence of every secret", () => {
    expect(scrub("a at_1 b at_1 rt_2", ["at_1", "rt_2", ""])).toBe(`a ${REDACTED} b ${REDACTED} ${REDACTED}`);
  });

  it("matches a secret literally, even one with replacement patterns or regular expression characters", () => {
    expect(scrub("x $& y a.*b $$ z", ["$&", "a.*b", "$$"])).toBe(`x ${REDACTED} y ${REDACTED} ${REDACTED} z`);
    expect(scrub("aXb", ["a.b"])).toBe("aXb");
  });

  it(`keeps a start shorter than ${MIN_SECRET_PREFIX} characters, and a short secret is scrubbed only whole`, () => {
    const secret = "abcdefghijklmnop";
    expect(scrub(`x ${secret.slice(0, MIN_SECRET_PREFIX - 1)} y`, [secret])).toBe(`x ${secret.slice(0, MIN_SECRET_PREFIX - 1)} y`);
    expect(scrub("code abc and abcd", ["abcd"])).toBe(`code abc and ${REDACTED}`);
  });

  it("scrubs the longest form at each place, so forms that begin alike leave no tail behind", () => {
    // Raw and encoded forms share "CANARY_abcdef"; the encoded tail must go too.
    const secret = "CANARY_abcdef+ghij";
    expect(scrub(`t=${encodeURIComponent(secret)}&n=1`, [secret])).toBe(`t=${REDACTED}&n=1`);
    expect(scrub(`t=${new URLSearchParams({ s: secret }).toString().slice(2)}`, [secret])).toBe(`t=${REDACTED}`);
  });

  it("lists each form once", () => {
    expect(secretForms("plain_token")).toEqual(["plain_token"]);
    expect(secretForms('a+b"c')).toEqual(['a+b"c', "a%2Bb%22c", 'a+b\\"c']);
    expect(secretForms("a b")).toEqual(["a b", "a%20b", "a+b"]);
  });
});

describe("sanitize", () => {
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

  it("keeps a string code at every depth, so callers can branch on the cause (FILE_CORRUPT, EROFS)", () => {
    const inner = Object.assign(new Error("read-only file system"), { code: "EROFS", path: "/secret/rt_9" });
    const outer = Object.assign(new Error("cannot write", { cause: inner }), { code: "IO_FAILED" });
    const clean = sanitize(outer, ["rt_9"]) as Error & { code?: string; cause: Error & { code?: string; path?: string } };
    expect(clean.code).toBe("IO_FAILED");
    expect(clean.cause.code).toBe("EROFS");
    expect(clean.cause.path).toBeUndefined();
  });

  it("scrubs at every depth: a long chain of non-enumerable causes, and AggregateError.errors within it", () => {
    const secret = CANARIES[1]!;
    let deep: unknown = new Error(`bottom ${encodeURIComponent(secret)}`);
    for (let level = 30; level > 0; level--) {
      const e = new Error(`level ${level}: ${level % 2 ? secret : JSON.stringify(secret)}`);
      // A cause defined by hand, non-enumerable as native ones are.
      Object.defineProperty(e, "cause", { value: deep, enumerable: false });
      deep = level === 15 ? new AggregateError([new Error(`first ${secret}`), e], `${secret.slice(0, 12)}… and more`) : e;
    }
    const clean = sanitize(deep, [secret]);
    const printed = inspect(clean, { depth: Infinity, showHidden: true });
    expect(printed).not.toMatch(/CANARY/);
    expect(printed).toContain("bottom");
    let levels = 0;
    for (let e: unknown = clean; e instanceof Error; e = e instanceof AggregateError ? e.errors[1] : e.cause) levels++;
    expect(levels).toBe(32); // 30 levels, the AggregateError around level 15, and the bottom
    const aggregate = [...Array(14)].reduce((e: Error) => e.cause as Error, clean) as AggregateError;
    expect(aggregate).toBeInstanceOf(AggregateError);
    expect(aggregate.errors.map((e: Error) => e.message)).toEqual([`first ${REDACTED}`, `level 15: ${REDACTED}`]);
    expect(Object.keys(aggregate)).not.toContain("errors");
    expect(Object.keys(aggregate)).not.toContain("cause");
  });

  it("stops at a cycle, through causes and AggregateError.errors alike, and keeps what came before it", () => {
    const a: Error & { cause?: unknown } = new Error("a at_1");
    const b = new AggregateError([a, new Error("c at_1")], "b at_1");
    a.cause = b;
    const clean = sanitize(a, ["at_1"]);
    expect(clean.message).toBe(`a ${REDACTED}`);
    const copyOfB = clean.cause as AggregateError;
    expect(copyOfB).toBeInstanceOf(AggregateError);
    expect(copyOfB.message).toBe(`b ${REDACTED}`);
    expect(copyOfB.errors.map((e: Error) => e.message)).toEqual([`c ${REDACTED}`]);
    const self: Error & { cause?: unknown } = new Error("self");
    self.cause = self;
    expect(sanitize(self, []).cause).toBeUndefined();
  });

  it("handles non-errors", () => {
    expect(sanitize("oops at_1", ["at_1"]).message).toBe(`oops ${REDACTED}`);
    expect(sanitize(undefined, []).message).toBe("undefined");
    expect(sanitize({ message: "m at_1", cause: "c at_1" }, ["at_1"]).cause).toMatchObject({ message: `c ${REDACTED}` });
  });
});
