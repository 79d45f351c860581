/**
 * The logger option: one info line per HTTP attempt with method, path, status, durationMs and
 * attempt; warn for a scheduled retry and a session end; info for a refresh; error for a network
 * failure. Canary tests: no line ever holds a token, a header value, a query or a body, whether the
 * logger is console-shaped or pino-shaped.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { AccessTokenSource } from "./access-token-source.js";
import { staticToken } from "./access-token-source.js";
import { createTenantClient, type TenantClientOptions } from "./create-tenant-client.js";
import { TenantClientError } from "./errors.js";
import { logTo, type Logger, type LogLevel } from "./logger.js";
import { retryPolicy } from "./middleware/retry.js";
import { fakeFetch, json } from "./test-support/fake-fetch.js";

const baseUrl = "https://acme.tenant.example";
const TOKEN = "at_LogCanary+Tok/en==";
const NEXT_TOKEN = "at_LogCanaryNext";
const HEADER_CANARY = "hdr-canary-7f3a";
const BODY_CANARY = "body-canary-19c2";
const QUERY_CANARY = "query-canary-55e1";

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

/** A console-shaped logger (variadic methods) that records every line. */
function consoleLike(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const record =
    (level: string) =>
    (...args: unknown[]): void =>
      void lines.push({ level, fields: args[0] as Record<string, unknown>, message: String(args[1]) });
  return { lines, debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") };
}

/** pino's LogFn overloads, declared here so that pino need not be installed. */
interface PinoLogFn {
  <T extends object>(obj: T, msg?: string, ...args: unknown[]): void;
  (obj: unknown, msg?: string, ...args: unknown[]): void;
  (msg: string, ...args: unknown[]): void;
}
interface PinoLike {
  level: string;
  debug: PinoLogFn;
  info: PinoLogFn;
  warn: PinoLogFn;
  error: PinoLogFn;
}

/** A pino-shaped logger: methods that use `this`, capturing (obj, msg). */
function pinoLike(): PinoLike & { lines: Line[] } {
  const lines: Line[] = [];
  function write(this: { lines: Line[] } | undefined, level: string, obj: unknown, msg?: string): void {
    if (!this) throw new Error("called without its logger");
    this.lines.push({ level, fields: obj as Record<string, unknown>, message: String(msg) });
  }
  return {
    lines,
    level: "debug",
    debug(obj: unknown, msg?: string) {
      write.call(this, "debug", obj, msg);
    },
    info(obj: unknown, msg?: string) {
      write.call(this, "info", obj, msg);
    },
    warn(obj: unknown, msg?: string) {
      write.call(this, "warn", obj, msg);
    },
    error(obj: unknown, msg?: string) {
      write.call(this, "error", obj, msg);
    },
  } as PinoLike & { lines: Line[] };
}

/** A strategy that hands out TOKEN, then NEXT_TOKEN after onUnauthorized. */
function rotating(): AccessTokenSource {
  let current = TOKEN;
  return { getAccessToken: async () => current, onUnauthorized: () => void (current = NEXT_TOKEN) };
}

const noWait = { sleep: async () => undefined, random: () => 0.5 };

/** Runs every kind of call the logger reports on, with canaries everywhere a careless line could pick them up. */
async function exercise(logger: Logger, level: LogLevel = "debug"): Promise<void> {
  const echo = { "x-echo": `${TOKEN} ${HEADER_CANARY}`, "content-type": "application/json" };
  const answers = fakeFetch(
    json(503, { secret: BODY_CANARY }, echo), // attempt 1 of call 1
    json(200, { secret: BODY_CANARY }, echo), // attempt 2 of call 1
    json(401, { secret: BODY_CANARY }, echo), // call 2: 401
    json(200, { ok: BODY_CANARY }), // call 2 after the refresh
    new TypeError(`fetch failed for ${TOKEN}`), // call 3: network error, not retried (POST)
  );
  const options: TenantClientOptions = {
    baseUrl,
    auth: rotating(),
    fetch: answers,
    retry: retryPolicy(noWait),
    logger: logTo(logger, level),
    headers: { "x-custom": HEADER_CANARY },
  };
  const client = createTenantClient(options);
  await client.raw.GET("/api/v1/tickets", { params: { query: { q: QUERY_CANARY } } });
  await client.raw.PUT("/api/v1/tickets/{id}", { params: { path: { id: 1 } }, body: { secret: BODY_CANARY } });
  await client.raw.POST("/api/v1/tickets", { body: { secret: BODY_CANARY } }).catch(() => undefined);
  // the session ends: the strategy fails after a 401
  const ended = createTenantClient({
    baseUrl,
    auth: {
      getAccessToken: async () => TOKEN,
      onUnauthorized: () => Promise.reject(new TenantClientError("INVALID_TOKEN", "session over")),
    },
    fetch: fakeFetch(json(401, {})),
    logger: logTo(logger, level),
  });
  await ended.GET("/api/v1/auth/user").catch(() => undefined);
}

const CANARIES = [TOKEN, NEXT_TOKEN, encodeURIComponent(TOKEN), HEADER_CANARY, BODY_CANARY, QUERY_CANARY];

describe("logger", () => {
  for (const [kind, make] of [
    ["console-shaped", consoleLike],
    ["pino-shaped", pinoLike],
  ] as const) {
    it(`never writes a token, header value, query or body to a ${kind} logger`, async () => {
      const logger = make();
      await exercise(logger as Logger);
      expect(logger.lines.length).toBeGreaterThan(8);
      const written = JSON.stringify(logger.lines);
      for (const canary of CANARIES) expect(written, canary).not.toContain(canary);
    });
  }

  it("writes one info line per attempt with method, path, status, durationMs and attempt", async () => {
    const logger = consoleLike();
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    await createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch,
      retry: retryPolicy(noWait),
      logger: logTo(logger),
    }).GET("/api/v1/auth/user");
    const requests = logger.lines.filter((l) => l.level === "info");
    expect(requests.map((l) => ({ ...l.fields, durationMs: typeof l.fields["durationMs"] }))).toEqual([
      { method: "GET", path: "/api/v1/auth/user", status: 503, durationMs: "number", attempt: 1 },
      { method: "GET", path: "/api/v1/auth/user", status: 200, durationMs: "number", attempt: 2 },
    ]);
    expect(requests[0]?.message).toMatch(/^GET \/api\/v1\/auth\/user 503 \d+ms \(attempt 1\)$/);
  });

  it("warns when a retry is scheduled, with the status or error and the delay", async () => {
    const logger = consoleLike();
    const fetch = fakeFetch(json(429, {}, { "retry-after": "2" }), new TypeError("fetch failed"), json(200, {}));
    await createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch,
      retry: retryPolicy({ ...noWait, retries: 3 }),
      logger: logTo(logger),
    }).GET("/api/v1/auth/user");
    const warnings = logger.lines.filter((l) => l.level === "warn").map((l) => l.fields);
    expect(warnings).toEqual([
      { method: "GET", path: "/api/v1/auth/user", status: 429, error: undefined, delayMs: 2000, attempt: 2 },
      { method: "GET", path: "/api/v1/auth/user", status: undefined, error: "NETWORK_ERROR", delayMs: 450, attempt: 3 },
    ]);
    const errors = logger.lines.filter((l) => l.level === "error").map((l) => l.fields);
    expect(errors).toEqual([
      expect.objectContaining({ method: "GET", error: "NetworkError", code: "NETWORK_ERROR", attempt: 2 }),
    ]);
  });

  it("logs a refresh-and-retry after 401 (info) and a session end (warn)", async () => {
    const logger = consoleLike();
    await createTenantClient({
      baseUrl,
      auth: rotating(),
      fetch: fakeFetch(json(401, {}), json(200, {})),
      logger: logTo(logger),
    }).GET("/api/v1/auth/user");
    const messages = logger.lines.map((l) => `${l.level} ${l.message}`);
    expect(messages).toContain("info GET /api/v1/auth/user 401: refreshing the token through the token source");
    expect(messages).toContain("info GET /api/v1/auth/user: token refreshed, sending again");
    expect(messages.filter((m) => m.startsWith("info GET /api/v1/auth/user 200"))).toHaveLength(1);

    const ended = consoleLike();
    const auth = {
      getAccessToken: async () => TOKEN,
      onUnauthorized: () => Promise.reject(new TenantClientError("INVALID_TOKEN", "x")),
    };
    await createTenantClient({ baseUrl, auth, fetch: fakeFetch(json(401, {})), logger: logTo(ended) })
      .GET("/api/v1/auth/user")
      .catch(() => undefined);
    expect(ended.lines.filter((l) => l.level === "warn")).toEqual([
      {
        level: "warn",
        fields: { method: "GET", path: "/api/v1/auth/user", error: "TenantClientError", code: "INVALID_TOKEN" },
        message: "GET /api/v1/auth/user: session ended, the token source could not give a new token",
      },
    ]);
  });

  it("writes nothing below logLevel, and nothing at all when silent", async () => {
    const warnOnly = consoleLike();
    await exercise(warnOnly, "warn");
    expect(new Set(warnOnly.lines.map((l) => l.level))).toEqual(new Set(["warn", "error"]));
    const silent = consoleLike();
    await exercise(silent, "silent");
    expect(silent.lines).toEqual([]);
    const byDefault = consoleLike();
    await createTenantClient({
      baseUrl,
      auth: rotating(),
      fetch: fakeFetch(json(200, {})),
      logger: logTo(byDefault),
    }).GET("/api/v1/auth/user");
    expect(byDefault.lines.map((l) => l.level)).toEqual(["info"]);
  });

  it("keeps requests going when the logger throws", async () => {
    const throwing: Logger = {
      info: () => {
        throw new Error("disk full");
      },
    };
    const { data } = await createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch: fakeFetch(json(200, { id: 1 })),
      logger: logTo(throwing),
    }).GET("/api/v1/auth/user");
    expect(data).toEqual({ id: 1 });
  });

  it("refuses an unknown logLevel with INVALID_OPTIONS", () => {
    expect(() => logTo(console, "verbose" as LogLevel)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining("logLevel") }),
    );
  });

  it("takes only a logger made by logTo (types)", () => {
    // @ts-expect-error -- a Logger goes through logTo(logger, level)
    const options: TenantClientOptions = { baseUrl, auth: staticToken(TOKEN), logger: console };
    expect(options.logger).toBe(console);
  });

  it("accepts console and a pino-style logger as Logger (types)", () => {
    expectTypeOf(console).toMatchTypeOf<Logger>();
    expectTypeOf<PinoLike>().toMatchTypeOf<Logger>();
    const options: TenantClientOptions = { baseUrl, auth: staticToken(TOKEN), logger: logTo(console) };
    expect(typeof options.logger).toBe("function");
  });
});
