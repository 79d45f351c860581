/**
 * Regression guard for redaction (issue requirement 4): every path runs with canary token values,
 * and every error, cause chain, event payload and serialized object is scanned for them.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";
import { REDIRECT_URI, bodyOf, json, pendingName, setup, tokens, type Setup } from "./test-support/harness.js";

const CANARY = /CANARY/;

describe("redaction", () => {
  it("never shows a token, code or verifier in errors, causes, events or serialized objects", async () => {
    const seen: unknown[] = [];
    const verifiers: string[] = [];
    let n = 0;
    let mode = "ok";
    let storageMode = "ok";
    const base = memoryStorage();
    // A storage whose failures quote what they were given, as careless ones do.
    const storage: TokenStorage = {
      get: async (k) => {
        if (storageMode === "read") throw new Error(`cannot read ${k}: last value ${await base.get(k)}`);
        return base.get(k);
      },
      set: async (k, v) => {
        if (storageMode === "write") throw new Error(`cannot write ${v}`, { cause: new Error(`value=${v}`) });
        return base.set(k, v);
      },
      delete: (k) => base.delete(k),
    };
    const pendingStorage = memoryStorage();
    const h: Setup = setup({ storage, pendingStorage });
    h.server.handler = async (call) => {
      const echo = call.body; // the request body, with whatever secret it carries
      switch (mode) {
        case "network":
          throw new TypeError(`fetch failed while sending ${echo}`, { cause: new Error(echo) });
        case "5xx":
          return new Response(`<html>error for ${echo}</html>`, { status: 503 });
        case "invalid_grant":
          return json(400, {
            error: "invalid_grant",
            error_description: `bad ${echo}`,
            error_uri: `https://x.test/?${echo}`,
          });
        case "oauth":
          return json(400, { error: "invalid_request", error_description: `bad ${echo}` });
        case "html":
          return new Response(`<html>${echo}</html>`, { status: 200 });
        case "malformed":
          return json(200, {
            access_token: "at_CANARY_bad",
            token_type: "Bearer",
            expires_in: -1,
            refresh_token: "rt_CANARY_bad",
          });
        default: {
          if (call.url.endsWith("/revoke")) return new Response(null, { status: 200 });
          n++;
          if (bodyOf(call)["code_verifier"] === undefined && bodyOf(call)["refresh_token"] === undefined)
            throw new Error("unexpected body");
          return json(200, {
            access_token: `at_CANARY_${n}`,
            refresh_token: `rt_CANARY_${n}`,
            token_type: "Bearer",
            expires_in: 900,
          });
        }
      }
    };
    for (const event of ["tokens-refreshed", "session-ended", "revoked"] as const)
      h.tm.on(event, (payload) => seen.push(payload));
    h.tm.on("storage-failed", ({ error }) => seen.push(error));

    const attempt = async (fn: () => Promise<unknown>) => {
      try {
        const result = await fn();
        // getAccessToken's result is the token itself, handed out on purpose.
        if (typeof result !== "string") seen.push(result);
      } catch (e) {
        seen.push(e);
      }
    };
    const callback = async (extra = "") => {
      const { url } = await h.tm.beginAuthorization();
      const state = new URL(url).searchParams.get("state") ?? "";
      const pending = JSON.parse((await pendingStorage.get(await pendingName(state))) ?? "{}") as { verifier: string };
      verifiers.push(pending.verifier);
      return `${REDIRECT_URI}?code=code_CANARY_${verifiers.length}&state=${state}${extra}`;
    };
    const signInWith = async (m: string) => {
      mode = m;
      const url = await callback();
      await attempt(() => h.tm.completeAuthorization(url));
    };

    // Sign-in: every failure of the exchange, then success.
    for (const m of ["network", "5xx", "oauth", "html", "malformed", "ok"]) await signInWith(m);
    // Callback rejections carrying a code.
    for (const extra of ["&error=access_denied&error_description=User+said+no"]) {
      const url = await callback(extra);
      await attempt(() => h.tm.completeAuthorization(url));
    }
    await attempt(() => h.tm.completeAuthorization(`${REDIRECT_URI}?code=code_CANARY_y&state=wrong`));
    // Refresh: success, then each failure.
    await attempt(() => h.tm.getAccessToken());
    for (const m of ["ok", "network", "5xx", "oauth", "html", "malformed"]) {
      mode = m;
      h.clock.advance(900_000);
      await attempt(() => h.tm.getAccessToken());
    }
    mode = "ok";
    storageMode = "write";
    h.clock.advance(900_000);
    await attempt(() => h.tm.getAccessToken());
    storageMode = "read";
    await attempt(() => h.tm.getAccessToken());
    storageMode = "ok";
    await attempt(() => h.tm.getAccessToken());
    // 401 handling and revocation failures.
    h.tm.onUnauthorized("at_CANARY_unknown");
    for (const m of ["oauth", "5xx", "network"]) {
      mode = m;
      await attempt(() => h.tm.revoke());
    }
    // The session ends.
    mode = "invalid_grant";
    h.clock.advance(900_000);
    await attempt(() => h.tm.getAccessToken());
    // Sign in again and revoke.
    await signInWith("ok");
    await attempt(() => h.tm.revoke());
    await attempt(() => h.tm.signOut());

    const errors = seen.filter((x): x is Error => x instanceof Error);
    // Every kind of failure was exercised.
    expect(new Set(errors.map((e) => (e as { code?: string }).code))).toEqual(
      new Set([
        "TRANSIENT",
        "OAUTH_ERROR",
        "INVALID_RESPONSE",
        "AUTHORIZATION_DENIED",
        "NO_PENDING_SIGN_IN",
        "STORAGE_FAILED",
        "SESSION_ENDED",
      ]),
    );
    const outputs: string[] = [JSON.stringify(h.tm), inspect(h.tm, { showHidden: true, depth: Infinity })];
    for (const item of seen) {
      outputs.push(JSON.stringify(item) ?? "", inspect(item, { showHidden: true, depth: Infinity }), String(item));
      for (let e: unknown = item; e instanceof Error; e = e.cause) outputs.push(e.message, e.stack ?? "", e.name);
    }
    const leaks = outputs.filter((o) => CANARY.test(o) || verifiers.some((v) => o.includes(v)));
    expect(leaks).toEqual([]);
    // The canaries were really in play: the requests carried them.
    expect(h.calls.some((c) => CANARY.test(c.body))).toBe(true);
    expect(verifiers.filter((v) => h.calls.some((c) => c.body.includes(v))).length).toBeGreaterThan(5);
  });

  it("scrubs echoes of a secret that are percent-encoded, form-encoded, JSON-escaped or cut short, at every depth of the cause", async () => {
    // Tokens with every character the encodings treat differently; CANARY first, so that a cut echo still shows it.
    const token = (kind: string, n: number) => `CANARY_${kind}+/= "\\_${n}_0123456789`;
    const echoes = [
      (s: string) => encodeURIComponent(s),
      (s: string) => new URLSearchParams({ t: s }).toString().slice(2),
      (s: string) => JSON.stringify(s).slice(1, -1),
      (s: string) => s.slice(0, 12),
      (s: string) => encodeURIComponent(s).slice(0, 15),
    ];
    /** Every secret the request carried, echoed in every form. */
    const echoAll = (call: { body: string }) => {
      const sent = call.body.startsWith("{")
        ? Object.values(JSON.parse(call.body) as Record<string, string>)
        : [...new URLSearchParams(call.body).values()];
      return sent.flatMap((value) => echoes.map((echo) => echo(value))).join(" | ");
    };
    let n = 0;
    let mode = "ok";
    const h: Setup = setup({ retry: { attempts: 1, baseDelayMs: 0 } });
    h.server.handler = async (call) => {
      const echoed = echoAll(call);
      switch (mode) {
        case "oauth":
          return json(400, {
            error: "invalid_request",
            error_description: `bad ${echoed}`,
            error_uri: `https://x.test/?q=${echoed}`,
          });
        case "invalid_grant":
          return json(400, { error: "invalid_grant", error_description: echoed });
        case "network": {
          // An AggregateError (as undici throws for several addresses) whose inner causes are hidden.
          const inner = new Error(`connect failed: ${echoed}`);
          Object.defineProperty(inner, "cause", { value: new Error(`deeper: ${echoed}`), enumerable: false });
          throw new TypeError(`fetch failed: ${echoed}`, {
            cause: new AggregateError([inner, new Error(echoed)], `all failed: ${echoed}`),
          });
        }
        default:
          if (call.url.endsWith("/revoke")) return new Response(null);
          n++;
          return tokens(token("at", n), token("rt", n));
      }
    };
    const seen: unknown[] = [];
    const attempt = (fn: () => Promise<unknown>) => fn().catch((e: unknown) => void seen.push(e));
    const signInWith = async (m: string) => {
      mode = m;
      const { url } = await h.tm.beginAuthorization();
      const state = new URL(url).searchParams.get("state") ?? "";
      await attempt(() =>
        h.tm.completeAuthorization(`${REDIRECT_URI}?code=${encodeURIComponent(token("code", 0))}&state=${state}`),
      );
    };
    for (const m of ["oauth", "network", "ok"]) await signInWith(m);
    for (const m of ["oauth", "network"]) {
      mode = m;
      await attempt(() => h.tm.revoke());
      h.clock.advance(900_000);
      await attempt(() => h.tm.getAccessToken());
    }
    mode = "invalid_grant";
    await attempt(() => h.tm.getAccessToken());

    expect(new Set(seen.map((e) => (e as { code?: string }).code))).toEqual(
      new Set(["OAUTH_ERROR", "TRANSIENT", "SESSION_ENDED"]),
    );
    // The echoes were really in play: the server was sent the canaries.
    expect(h.calls.filter((c) => CANARY.test(c.body)).length).toBeGreaterThan(6);
    const printed = seen.flatMap((e) => [
      inspect(e, { showHidden: true, depth: Infinity }),
      JSON.stringify(e),
      String(e),
    ]);
    expect(printed.filter((p) => CANARY.test(p))).toEqual([]);
    // The errors still say what happened, around the scrubbed parts.
    expect(printed.join("\n")).toMatch(/all failed: [^\n]*\[redacted\]/);
    expect(printed.join("\n")).toMatch(/deeper: [^\n]*\[redacted\]/);
  });

  it("keeps the token record inside the manager: the manager, its results and its events print no token", async () => {
    const h = setup();
    let n = 0;
    h.server.handler = () => {
      n++;
      return json(200, {
        access_token: `at_CANARY_${n}`,
        refresh_token: `rt_CANARY_${n}`,
        token_type: "Bearer",
        expires_in: 900,
      });
    };
    const seen: unknown[] = [];
    h.tm.on("tokens-refreshed", (payload) => seen.push(payload));
    const { url } = await h.tm.beginAuthorization();
    const state = new URL(url).searchParams.get("state") ?? "";
    seen.push(await h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${state}`));
    expect(await h.tm.getAccessToken()).toBe("at_CANARY_1");
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_CANARY_2");
    expect(seen).toHaveLength(2);

    // The manager's own properties are its methods only; no record hangs on it or on them.
    expect(Object.values(h.tm).every((v) => typeof v === "function")).toBe(true);
    const printed = [
      String(h.tm),
      JSON.stringify(h.tm),
      inspect(h.tm, { showHidden: true, depth: Infinity }),
      ...Object.values(h.tm).map((method) => JSON.stringify(Object.entries(method as object))),
      ...seen.flatMap((item) => [JSON.stringify(item), inspect(item, { showHidden: true, depth: Infinity })]),
    ];
    expect(printed.filter((p) => CANARY.test(p))).toEqual([]);
  });
});
