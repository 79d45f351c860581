/**
 * The one rule both kits remove secrets by (regression guard for issue 12 point 6 and issue 29
 * point 3: the client and the token manager had two algorithms, and the client's missed an echo cut
 * short). Every form a kit sends a secret in (raw, percent-encoded in either case, form-encoded,
 * JSON-escaped), whole or cut short, must be removed, at every depth and in every hiding place.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  formsOf,
  MAX_DEPTH,
  MIN_SECRET_PREFIX,
  mentions,
  redact,
  REDACTED,
  sanitize,
  scrub,
  secretForms,
  TOO_DEEP,
} from "./redact.js";

/** Canary secrets with every character that encodings treat differently: + / = space " \ ' ! ( ) * and more. */
const CANARIES = [
  'CANARY_at+/=="\\end_0123456789',
  "CANARY rt with spaces/and+plus==",
  "CANARY_'()*!~-._%41_percent-literal",
  'CANARY\\"quoted\\"/\\/\\\\x',
  "it's/a (form) token!",
];

/** The ways a server may echo a secret the kit sent, each named. */
const ECHOES: Record<string, (s: string) => string> = {
  raw: (s) => s,
  "percent-encoded (encodeURIComponent)": (s) => encodeURIComponent(s),
  "percent-encoded, lower-case hex": (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  "form-encoded (URLSearchParams)": (s) => new URLSearchParams({ t: s }).toString().slice(2),
  "JSON-escaped": (s) => JSON.stringify(s).slice(1, -1),
};

/** Where a server may cut the echo: nowhere, one character short, or at the shortest removed start. */
const CUTS: Record<string, (s: string) => string> = {
  whole: (s) => s,
  "one character short": (s) => s.slice(0, -1),
  "cut to half": (s) => s.slice(0, Math.max(MIN_SECRET_PREFIX, s.length >> 1)),
  [`cut to ${MIN_SECRET_PREFIX} characters`]: (s) => s.slice(0, MIN_SECRET_PREFIX),
};

/** Every way a careless logger could print a value. */
function everyRendering(value: unknown): string {
  let json = "";
  try {
    json = JSON.stringify(value);
  } catch {
    json = "(cycle)";
  }
  return [String(value), json, inspect(value, { depth: 50, showHidden: true }), (value as Error)?.stack].join("\n");
}

/** A chain of `depth` errors, the innermost mentioning `text`. */
function chain(depth: number, text: string): Error {
  let error = new Error(`innermost: ${text}`);
  for (let i = 1; i < depth; i++) error = new Error(`level ${depth - i}`, { cause: error });
  return error;
}

describe("scrub: the canary matrix of forms and cuts", () => {
  for (const secret of CANARIES) {
    for (const [echo, encode] of Object.entries(ECHOES)) {
      for (const [cut, shorten] of Object.entries(CUTS)) {
        it(`removes ${JSON.stringify(secret)} echoed ${echo}, ${cut}`, () => {
          const text = `error: got «${shorten(encode(secret))}» back`;
          expect(scrub(text, ["other-secret", secret])).toBe(`error: got «${REDACTED}» back`);
          expect(mentions(text, formsOf([secret]))).toBe(true);
        });
      }
    }
  }

  it("removes a secret echoed inside a JSON-escaped form body, as a server quoting the whole request would", () => {
    const secret = CANARIES[0]!;
    const body = new URLSearchParams({ token: secret, client_id: "demo" }).toString();
    const quoted = JSON.stringify({ error_description: `bad request: ${body}` });
    expect(scrub(quoted, [secret])).not.toMatch(/CANARY/);
  });
});

describe("scrub", () => {
  it("replaces every occurrence of every secret, and skips empty or absent ones", () => {
    expect(scrub("a at_1 b at_1 rt_2", ["at_1", "rt_2", "", undefined])).toBe(
      `a ${REDACTED} b ${REDACTED} ${REDACTED}`,
    );
    expect(scrub("nothing here", [])).toBe("nothing here");
  });

  it("matches a secret literally, even one with replacement patterns or regular expression characters", () => {
    expect(scrub("x $& y a.*b $$ z", ["$&", "a.*b", "$$"])).toBe(`x ${REDACTED} y ${REDACTED} ${REDACTED} z`);
    expect(scrub("aXb", ["a.b"])).toBe("aXb");
  });

  it(`keeps a start shorter than ${MIN_SECRET_PREFIX} characters, and a short secret is removed only whole`, () => {
    const secret = "abcdefghijklmnop";
    expect(scrub(`x ${secret.slice(0, MIN_SECRET_PREFIX - 1)} y`, [secret])).toBe(
      `x ${secret.slice(0, MIN_SECRET_PREFIX - 1)} y`,
    );
    expect(scrub("code abc and abcd", ["abcd"])).toBe(`code abc and ${REDACTED}`);
    expect(mentions(`x ${secret.slice(0, MIN_SECRET_PREFIX - 1)} y`, formsOf([secret]))).toBe(false);
  });

  it("removes the longest form at each place, so forms that begin alike leave no tail behind", () => {
    // Raw and encoded forms share "CANARY_abcdef"; the encoded tail must go too.
    const secret = "CANARY_abcdef+ghij";
    expect(scrub(`t=${encodeURIComponent(secret)}&n=1`, [secret])).toBe(`t=${REDACTED}&n=1`);
    expect(scrub(`t=${new URLSearchParams({ s: secret }).toString().slice(2)}`, [secret])).toBe(`t=${REDACTED}`);
  });
});

describe("secretForms", () => {
  it("lists each form once, longest first", () => {
    const forms = secretForms('a+b/c="d\\');
    expect(forms).toEqual([...new Set(forms)]);
    expect(forms.map((f) => f.length)).toEqual([...forms.map((f) => f.length)].sort((a, b) => b - a));
    expect(forms).toContain("a%2Bb%2Fc%3D%22d%5C");
    expect(forms).toContain("a%2bb%2fc%3d%22d%5c");
    expect(forms).toContain('a+b/c=\\"d\\\\');
    expect(secretForms("plain_token")).toEqual(["plain_token"]);
    expect(secretForms("a b")).toEqual(["a%20b", "a b", "a+b"]);
  });
});

describe("redact: forms, depths and hiding places", () => {
  for (const token of CANARIES) {
    for (const [form, encode] of Object.entries(ECHOES)) {
      for (const depth of [1, 2, 3, 6]) {
        it(`removes a ${form} canary at cause depth ${depth} (${JSON.stringify(token)})`, () => {
          const original = chain(depth, `Authorization: Bearer ${encode(token)}`);
          const copy = redact(original, [token]);
          expect(copy).not.toBe(original);
          const printed = everyRendering(copy);
          for (const encoded of Object.values(ECHOES).map((f) => f(token))) expect(printed).not.toContain(encoded);
          expect(printed).toContain(REDACTED);
        });
      }
    }

    it(`removes a canary from non-enumerable properties (${JSON.stringify(token)})`, () => {
      const error = new Error("request failed");
      Object.defineProperty(error, "request", {
        value: { headers: { authorization: `Bearer ${token}` } },
        enumerable: false,
      });
      const copy = redact(error, [token]);
      expect(everyRendering(copy)).not.toContain(token);
      expect(Object.getOwnPropertyDescriptor(copy, "request")?.enumerable).toBe(false);
    });

    it(`removes a canary from AggregateError.errors and their causes (${JSON.stringify(token)})`, () => {
      const aggregate = new AggregateError(
        [new Error("first"), new Error("second", { cause: new Error(`q=${encodeURIComponent(token)}`) })],
        "all failed",
      );
      const copy = redact(new Error("outer", { cause: aggregate }), [token]);
      expect(everyRendering(copy)).not.toContain(encodeURIComponent(token));
      const copiedAggregate = (copy as Error).cause as AggregateError;
      expect(copiedAggregate).toBeInstanceOf(AggregateError);
      expect(copiedAggregate.errors).toHaveLength(2);
      expect(((copiedAggregate.errors[1] as Error).cause as Error).message).toBe(`q=${REDACTED}`);
    });
  }

  it("removes an echo cut short from a body (regression: the client's redaction missed it)", () => {
    const token = "at_Zm9vYmFyYmF6cXV4";
    const body = { error: "invalid_token", detail: `token ${token.slice(0, 12)}… is not valid` };
    expect(redact(body, [token])).toEqual({ error: "invalid_token", detail: `token ${REDACTED}… is not valid` });
  });

  it("keeps the name, message, code and own fields of the errors it copies", () => {
    const inner = Object.assign(new TypeError(`secret_1 failed`), { code: "ECONNRESET", errno: -104 });
    const copy = redact(new Error("fetch failed", { cause: inner }), ["secret_1"]) as Error;
    const cause = copy.cause as Error & { code: string; errno: number };
    expect(copy.message).toBe("fetch failed");
    expect(cause.name).toBe("TypeError");
    expect(cause.message).toBe(`${REDACTED} failed`);
    expect(cause.code).toBe("ECONNRESET");
    expect(cause.errno).toBe(-104);
  });

  it("copies a cycle once and terminates", () => {
    const a: Record<string, unknown> = { token: "secret_1" };
    const b: Record<string, unknown> = { a };
    a["b"] = b;
    const copy = redact(new Error("loop", { cause: a }), ["secret_1"]) as Error;
    const cause = copy.cause as Record<string, Record<string, unknown>>;
    expect(cause["token"]).toBe(REDACTED);
    expect(cause["b"]?.["a"]).toBe(cause);
  });

  it("replaces what is nested deeper than it checks, instead of keeping it unchecked", () => {
    const deep = chain(MAX_DEPTH + 5, "secret_1");
    // Deeper than util.inspect prints: walk the copied cause chain instead.
    const messages: string[] = [];
    let node: unknown = redact(deep, ["secret_1"]);
    while (node instanceof Error) {
      messages.push(node.message);
      node = node.cause;
    }
    expect(messages.join("\n")).not.toContain("secret_1");
    expect(node).toBe(TOO_DEEP);
  });

  it("returns a deeply nested error body that holds no token unchanged (regression: bodies 9 levels deep were redacted)", () => {
    let body: Record<string, unknown> = { leaf: "no secret here" };
    for (let level = 0; level < 20; level++) body = { level, inner: body };
    expect(redact(body, ["secret_1"])).toBe(body);
  });

  it("scrubs maps, sets, Headers and URLSearchParams", () => {
    const value = {
      map: new Map([["k", "secret_1"]]),
      set: new Set(["x secret_1"]),
      headers: new Headers({ "x-token": "secret_1" }),
      query: new URLSearchParams({ access_token: "secret_1" }),
    };
    const copy = redact(value, ["secret_1"]);
    expect(everyRendering(copy)).not.toContain("secret_1");
    expect(copy.headers.get("x-token")).toBe(REDACTED);
    expect(copy.map.get("k")).toBe(REDACTED);
  });

  it("returns the value itself when no form of the token appears, and when there is no token", () => {
    const error = new Error("fetch failed", { cause: new Error("ECONNREFUSED") });
    expect(redact(error, ["secret_1"])).toBe(error);
    expect(redact(error, [undefined])).toBe(error);
    expect(redact("text", [])).toBe("text");
  });
});

describe("sanitize", () => {
  it("copies name and message of an error and its cause chain without the secrets or other fields", () => {
    const inner = Object.assign(new Error("refresh_token=rt_9 refused"), { body: "rt_9" });
    const outer = Object.assign(new TypeError("fetch failed for at_9", { cause: inner }), {
      request: { body: "rt_9" },
    });
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
    const clean = sanitize(outer, ["rt_9"]) as Error & {
      code?: string;
      cause: Error & { code?: string; path?: string };
    };
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
      deep =
        level === 15 ? new AggregateError([new Error(`first ${secret}`), e], `${secret.slice(0, 12)}… and more`) : e;
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
    expect(sanitize({ message: "m at_1", cause: "c at_1" }, ["at_1"]).cause).toMatchObject({
      message: `c ${REDACTED}`,
    });
  });
});
