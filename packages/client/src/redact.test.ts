/**
 * Regression guard for issue 12 point 6: the NetworkError redaction missed a token at cause depth
 * 2 and beyond, in non-enumerable properties and in `AggregateError.errors`. Every form the kit
 * produces (raw, percent-encoded, form-encoded, JSON-escaped) must be scrubbed at every depth.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { staticToken } from "./auth-strategy.js";
import { createTenantClient } from "./create-tenant-client.js";
import { NetworkError } from "./errors.js";
import { MAX_DEPTH, redact, secretForms, TOO_DEEP } from "./redact.js";
import { fakeFetch } from "./test-support/fake-fetch.js";

/**
 * Canaries with characters that encode differently in each form: `+ / = " \\` (percent and JSON),
 * and `' ! ( ) *` and a space, which encodeURIComponent keeps or writes as %20 but a form encodes.
 */
const CANARIES = ['at_pl+us/sl=ash"quo\\te', "at_Zm9v+YmFy/YmF6==", "it's/a (form) token!"];

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

const FORMS: Record<string, (token: string) => string> = {
  raw: (t) => t,
  "percent-encoded": (t) => encodeURIComponent(t),
  "percent-encoded, lower-case hex": (t) => encodeURIComponent(t).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  "form-encoded": (t) => new URLSearchParams({ t }).toString().slice(2),
  "JSON-escaped": (t) => JSON.stringify(t).slice(1, -1),
};

/** A chain of `depth` errors, the innermost mentioning `text`. */
function chain(depth: number, text: string): Error {
  let error = new Error(`innermost: ${text}`);
  for (let i = 1; i < depth; i++) error = new Error(`level ${depth - i}`, { cause: error });
  return error;
}

describe("redact: the matrix of forms, depths and hiding places", () => {
  for (const token of CANARIES) {
    for (const [form, encode] of Object.entries(FORMS)) {
      for (const depth of [1, 2, 3, 6]) {
        it(`removes a ${form} canary at cause depth ${depth} (${JSON.stringify(token)})`, () => {
          const original = chain(depth, `Authorization: Bearer ${encode(token)}`);
          const copy = redact(original, [token]);
          expect(copy).not.toBe(original);
          const printed = everyRendering(copy);
          for (const encoded of Object.values(FORMS).map((f) => f(token))) expect(printed).not.toContain(encoded);
          expect(printed).toContain("[redacted]");
        });
      }
    }

    it(`removes a canary from non-enumerable properties (${JSON.stringify(token)})`, () => {
      const error = new Error("request failed");
      Object.defineProperty(error, "request", { value: { headers: { authorization: `Bearer ${token}` } }, enumerable: false });
      const copy = redact(error, [token]);
      expect(everyRendering(copy)).not.toContain(token);
      expect(Object.getOwnPropertyDescriptor(copy, "request")?.enumerable).toBe(false);
    });

    it(`removes a canary from AggregateError.errors and their causes (${JSON.stringify(token)})`, () => {
      const aggregate = new AggregateError([new Error("first"), new Error("second", { cause: new Error(`q=${encodeURIComponent(token)}`) })], "all failed");
      const copy = redact(new Error("outer", { cause: aggregate }), [token]);
      expect(everyRendering(copy)).not.toContain(encodeURIComponent(token));
      const copiedAggregate = (copy as Error).cause as AggregateError;
      expect(copiedAggregate).toBeInstanceOf(AggregateError);
      expect(copiedAggregate.errors).toHaveLength(2);
      expect(((copiedAggregate.errors[1] as Error).cause as Error).message).toBe("q=[redacted]");
    });
  }

  it("lists each form once, longest first", () => {
    const forms = secretForms('a+b/c="d\\');
    expect(forms).toEqual([...new Set(forms)]);
    expect(forms.map((f) => f.length)).toEqual([...forms.map((f) => f.length)].sort((a, b) => b - a));
    expect(forms).toContain("a%2Bb%2Fc%3D%22d%5C");
    expect(forms).toContain('a+b/c=\\"d\\\\');
  });

  it("keeps the name, message, code and own fields of the errors it copies", () => {
    const inner = Object.assign(new TypeError(`secret_1 failed`), { code: "ECONNRESET", errno: -104 });
    const copy = redact(new Error("fetch failed", { cause: inner }), ["secret_1"]) as Error;
    const cause = copy.cause as Error & { code: string; errno: number };
    expect(copy.message).toBe("fetch failed");
    expect(cause.name).toBe("TypeError");
    expect(cause.message).toBe("[redacted] failed");
    expect(cause.code).toBe("ECONNRESET");
    expect(cause.errno).toBe(-104);
  });

  it("copies a cycle once and terminates", () => {
    const a: Record<string, unknown> = { token: "secret_1" };
    const b: Record<string, unknown> = { a };
    a["b"] = b;
    const error = new Error("loop", { cause: a });
    const copy = redact(error, ["secret_1"]) as Error;
    const cause = copy.cause as Record<string, Record<string, unknown>>;
    expect(cause["token"]).toBe("[redacted]");
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
    expect(copy.headers.get("x-token")).toBe("[redacted]");
    expect(copy.map.get("k")).toBe("[redacted]");
  });

  it("returns the value itself when no form of the token appears, and when there is no token", () => {
    const error = new Error("fetch failed", { cause: new Error("ECONNREFUSED") });
    expect(redact(error, ["secret_1"])).toBe(error);
    expect(redact(error, [undefined])).toBe(error);
    expect(redact("text", [])).toBe("text");
  });
});

describe("NetworkError through the client: the cause chain is scrubbed", () => {
  // b64token characters only: the client refuses to send anything else (INVALID_TOKEN)
  const TOKEN = "at_Zm9v+YmFy/YmF6==";

  it("removes the token at cause depth 3, in a hidden property and in AggregateError.errors", async () => {
    const hidden = new Error("socket closed");
    Object.defineProperty(hidden, "sentHeaders", { value: `authorization: Bearer ${TOKEN}`, enumerable: false });
    const failure = Object.assign(new TypeError("fetch failed"), {
      cause: new AggregateError([hidden, new Error("retry", { cause: new Error(`GET /x?t=${encodeURIComponent(TOKEN)}`) })], "connect failed"),
    });
    const client = createTenantClient({ baseUrl: "https://acme.tenant.example", auth: staticToken(TOKEN), fetch: fakeFetch(failure), retry: false });
    const error = await client.GET("/api/v1/auth/user").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    const printed = everyRendering(error);
    expect(printed).not.toContain(TOKEN);
    expect(printed).not.toContain(encodeURIComponent(TOKEN));
    expect(printed).toContain("fetch failed");
  });
});
