/**
 * The `logger` option, made by `logSessionTo`: one line per request, retries, refreshes, sign-in, revocation and the end of a
 * session, at the levels agreed with the client package; and, with canary values, never a token,
 * code, verifier or state in any line, whether the logger is console-shaped or pino-shaped.
 */
import { Console } from "node:console";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { logSessionTo, type Logger, type LogLevel } from "./logger.js";
import { failure } from "./test-support/failure.js";
import { json, REDIRECT_URI, setup, signIn, tokens } from "./test-support/harness.js";

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

/** A pino-shaped logger that records (fields, message) and needs its `this`, as pino does. */
function capturing() {
  const lines: Line[] = [];
  const logger = {
    lines,
    write(level: string, fields: Record<string, unknown>, message: string) {
      this.lines.push({ level, fields, message });
    },
    debug(fields: Record<string, unknown>, message: string) {
      this.write("debug", fields, message);
    },
    info(fields: Record<string, unknown>, message: string) {
      this.write("info", fields, message);
    },
    warn(fields: Record<string, unknown>, message: string) {
      this.write("warn", fields, message);
    },
    error(fields: Record<string, unknown>, message: string) {
      this.write("error", fields, message);
    },
  };
  return logger;
}

const levelsOf = (lines: Line[]) => lines.map((l) => `${l.level} ${l.message.replace(/\d+ms/g, "Nms")}`);

describe("the logger option", () => {
  it("writes one info line per request with method, path, status, duration and attempt", async () => {
    const logger = capturing();
    const h = setup({ logger: logSessionTo(logger) });
    await signIn(h.tm);
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    await h.tm.revoke();
    const requests = logger.lines.filter((l) => "method" in l.fields);
    expect(requests.map((l) => l.fields)).toEqual([
      { method: "POST", path: "/oauth/token", status: 200, durationMs: expect.any(Number), attempt: 1 },
      { method: "POST", path: "/oauth/token", status: 200, durationMs: expect.any(Number), attempt: 1 },
      { method: "POST", path: "/oauth/revoke", status: 200, durationMs: expect.any(Number), attempt: 1 },
    ]);
    expect(requests.every((l) => l.level === "info")).toBe(true);
    expect(requests[0]?.message).toMatch(/^POST \/oauth\/token 200 \d+ms \(attempt 1\)$/);
    expect(levelsOf(logger.lines)).toEqual([
      "info POST /oauth/token 200 Nms (attempt 1)",
      "info Signed in",
      "info Refresh started",
      "info POST /oauth/token 200 Nms (attempt 1)",
      "info Refresh finished",
      "info POST /oauth/revoke 200 Nms (attempt 1)",
      "info Revoked",
    ]);
    const refreshed = logger.lines.find((l) => l.message === "Refresh finished");
    expect(refreshed?.fields).toEqual({ expiresAt: h.clock.now() + 900_000 });
  });

  it("warns of each retry with its delay, logs a request with no answer as an error, and warns when the session ends", async () => {
    const logger = capturing();
    const h = setup({ logger: logSessionTo(logger), retry: { attempts: 3, baseDelayMs: 1 } });
    await signIn(h.tm);
    h.server.queue.push(
      () => new Response("busy", { status: 503 }),
      () =>
        Promise.reject(
          new TypeError("fetch failed", {
            cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
          }),
        ),
      () => json(400, { error: "invalid_grant" }),
    );
    h.clock.advance(900_000);
    await expect(h.tm.getAccessToken()).rejects.toMatchObject({ code: "SESSION_ENDED" });
    expect(levelsOf(logger.lines.slice(2))).toEqual([
      "info Refresh started",
      "info POST /oauth/token 503 Nms (attempt 1)",
      "warn Refresh attempt 1 failed (HTTP 503); retrying in Nms",
      "error POST /oauth/token no answer Nms (attempt 2)",
      "warn Refresh attempt 2 failed (no connection); retrying in Nms",
      "info POST /oauth/token 400 Nms (attempt 3)",
      "warn Session ended (invalid_grant)",
    ]);
    expect(logger.lines.filter((l) => l.message.startsWith("Refresh attempt")).map((l) => l.fields)).toEqual([
      { attempt: 1, status: 503, delayMs: 1 },
      { attempt: 2, status: undefined, delayMs: 2 },
    ]);
  });

  it("warns when a refresh could not be stored, and still serves the new token", async () => {
    const logger = capturing();
    const h = setup({ logger: logSessionTo(logger) });
    await signIn(h.tm);
    h.storage.set = async () => {
      throw new Error("EROFS: read-only file system");
    };
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(levelsOf(logger.lines.slice(2))).toEqual([
      "info Refresh started",
      "info POST /oauth/token 200 Nms (attempt 1)",
      "warn Refresh finished, but the tokens could not be stored; the write is retried on a later call",
    ]);
  });

  it("writes nothing below the chosen level: info by default, debug adds lock waits and storage reads, silent writes nothing", async () => {
    const run = async (logLevel?: LogLevel) => {
      const logger = capturing();
      const h = setup({ logger: logLevel ? logSessionTo(logger, logLevel) : logSessionTo(logger) });
      await signIn(h.tm);
      h.clock.advance(900_000);
      await h.tm.getAccessToken();
      return logger.lines;
    };
    const byDefault = await run();
    expect(byDefault.length).toBeGreaterThan(0);
    expect(byDefault.every((l) => l.level === "info")).toBe(true);
    const debug = await run("debug");
    expect(debug.filter((l) => l.level === "debug").map((l) => l.message)).toEqual([
      "Waiting for the refresh lock",
      "Refresh lock taken; reading the tokens from storage",
    ]);
    expect(await run("warn")).toEqual([]);
    expect(await run("silent")).toEqual([]);
  });

  it("refuses an unknown level, and a logger that throws or lacks a level changes nothing", async () => {
    expect(() => logSessionTo(console, "verbose" as LogLevel)).toThrow(failure("INVALID_OPTIONS"));
    const throwing: Logger = {
      info() {
        throw new Error("disk full");
      },
    };
    const h = setup({ logger: logSessionTo(throwing) });
    await signIn(h.tm);
    expect(await h.tm.getAccessToken()).toBe("at_1");
    const warnOnly = capturing();
    logSessionTo({ warn: warnOnly.warn.bind(warnOnly) }, "debug")("signed-in", {});
    expect(warnOnly.lines).toEqual([]);
  });
});

describe("logging is opt-in", () => {
  it("refuses a logger given as it is, saying to pass logSessionTo(logger, level)", () => {
    expect(() => setup({ logger: console as never })).toThrow(
      "INVALID_OPTIONS: logger: pass logSessionTo(logger, level)",
    );
  });

  it("keeps the lines' text out of the manager: a browser bundle without logSessionTo holds none of them", async () => {
    const { build } = await import("esbuild");
    const bundle = async (contents: string) =>
      (
        await build({
          stdin: { contents, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "ts" },
          bundle: true,
          platform: "browser",
          format: "esm",
          write: false,
          logLevel: "silent",
        })
      ).outputFiles[0]?.text ?? "";
    const without = await bundle(`export { createTokenManager, webStorage } from "./index.ts";`);
    const withLogging = await bundle(`export { createTokenManager, webStorage, logSessionTo } from "./index.ts";`);
    for (const line of ["Refresh started", "Waiting for the refresh lock", "Session ended (invalid_grant)"]) {
      expect(without).not.toContain(line);
      expect(withLogging).toContain(line);
    }
  });
});

describe("log lines never carry a secret (canary values)", () => {
  const CANARY = /CANARY/;

  /** Every path that logs, with a server that echoes each request body back in its answers. */
  async function everyPath(logger: Logger) {
    let n = 0;
    let mode = "ok";
    const h = setup({ logger: logSessionTo(logger, "debug"), retry: { attempts: 2, baseDelayMs: 0 } });
    h.server.handler = async (call) => {
      if (mode === "network") throw new TypeError(`fetch failed sending ${call.body}`);
      if (mode === "5xx") return new Response(`<p>${call.body}</p>`, { status: 503 });
      if (mode === "invalid_grant")
        return json(400, { error: "invalid_grant", error_description: `refused ${call.body}` });
      if (call.url.endsWith("/revoke"))
        return mode === "oauth"
          ? json(400, { error: "invalid_request", error_description: call.body })
          : new Response(null);
      n++;
      return tokens(`at_CANARY_+/="\\_${n}`, `rt_CANARY_+/="\\_${n}`);
    };
    const { url } = await h.tm.beginAuthorization();
    const state = new URL(url).searchParams.get("state") ?? "";
    await h.tm.completeAuthorization(`${REDIRECT_URI}?code=code_CANARY_1&state=${state}`);
    for (const m of ["ok", "5xx", "network"]) {
      mode = m;
      h.clock.advance(900_000);
      await h.tm.getAccessToken().catch(() => {});
    }
    mode = "oauth";
    await h.tm.revoke().catch(() => {});
    mode = "ok";
    await h.tm.revoke();
    await signIn(h.tm);
    mode = "invalid_grant";
    h.clock.advance(900_000);
    await h.tm.getAccessToken().catch(() => {});
    // What the requests carried, to look for in the lines besides the CANARY marker.
    const secrets = [
      state,
      ...h.calls.flatMap((c) =>
        c.body.startsWith("{") ? Object.values(JSON.parse(c.body) as Record<string, string>) : [],
      ),
    ];
    return { h, secrets: secrets.filter((s) => s.length > 20 && !s.startsWith("http")) };
  }

  it("holds for a pino-shaped logger: no field or message shows a token, code, verifier or state", async () => {
    const logger = capturing();
    const { h, secrets } = await everyPath(logger);
    expect(h.calls.some((c) => CANARY.test(c.body))).toBe(true);
    expect(secrets.length).toBeGreaterThanOrEqual(3); // the state and both verifiers
    expect(new Set(logger.lines.map((l) => l.level))).toEqual(new Set(["debug", "info", "warn", "error"]));
    const printed = logger.lines.flatMap((l) => [JSON.stringify(l), inspect(l, { depth: Infinity })]);
    expect(printed.filter((p) => CANARY.test(p) || secrets.some((s) => p.includes(s)))).toEqual([]);
  });

  it("holds for console itself, as it prints the lines", async () => {
    let output = "";
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const { h, secrets } = await everyPath(new Console({ stdout: sink, stderr: sink }));
    expect(h.calls.some((c) => CANARY.test(c.body))).toBe(true);
    expect(output).toContain("POST /oauth/token 200");
    expect(output).toContain("Session ended");
    expect(CANARY.test(output)).toBe(false);
    expect(secrets.filter((s) => output.includes(s))).toEqual([]);
  });
});
