/**
 * Logging, opt-in: `logger: logSessionTo(console, "info")`. The manager reports events (a short name
 * and the fields it builds itself: method, path, status, durations, attempts, expiry times, a holder's
 * pid and host); this module, imported only by apps that log, turns each into a line for a pino-shaped
 * logger (fields first, message second) that `console` fits as is. Never a token, code, verifier,
 * state, header value or body.
 *
 * @see RFC 6749 §10.3, §10.4 (tokens kept confidential); RFC 9700 §4.3
 */
import { fail } from "./errors.js";
import {
  isLogLevel,
  lineWriter,
  type LineLevel,
  type Logger,
  type LogLevel,
  type LogLine,
  type LogLines,
} from "@tenant-integration/internal";

// The logger's shape and levels are the client's too (packages/internal/src/logger.ts): one logger serves both.
export type { Logger, LogLevel };

/** What the manager reports to its log; {@link logSessionTo} turns each into a line. */
export type SessionLogEvent =
  | "answered"
  | "no-answer"
  | "signed-in"
  | "revoked"
  | "lock-wait"
  | "lock-taken"
  | "fresh-in-storage"
  | "fresh-while-waiting"
  | "lock-lost"
  | "intent-wait"
  | "intent-holder-gone"
  | "intent-expired"
  | "intent-unwritable"
  | "intent-unreadable"
  | "intent-beat-failed"
  | "refresh-started"
  | "tokens-changed"
  | "refresh-retry"
  | "refresh-not-retried"
  | "session-ended"
  | "refresh-finished"
  | "refresh-unsaved"
  | "rewrite-failed"
  | "tokens-unreadable"
  | "pending-fallback"
  | "pending-unreadable";

/**
 * The manager's `logger` option: a function made by {@link logSessionTo}, which the manager calls with
 * what happened and its fields. The manager holds no logging code of its own, so an app that does not
 * log does not ship any.
 *
 * @example
 * ```ts
 * const logger: SessionLogger = logSessionTo(console, "warn");
 * ```
 * @see RFC 9700 §4.3
 */
export type SessionLogger = (event: SessionLogEvent, fields: Record<string, unknown>) => void;

type Fields = Record<string, unknown>;

/** The process a refresh intent names, as the lines say it. */
const holder = (f: Fields): string =>
  f["pid"] === undefined
    ? "another process"
    : `process ${String(f["pid"])} on ${String(f["host"] ?? "an unknown host")}`;

/** A line of the manager: the fields as the manager reported them, and a message made from them. */
function says(
  level: LineLevel,
  message: (fields: Fields) => string,
): readonly [LineLevel, (fields: Fields) => LogLine] {
  return [level, (fields) => [fields, message(fields)]];
}

/**
 * Each event's level and message: made when a logger is (a table built at import would ship with
 * every app, logging or not, once the package is one module).
 */
function lines(): LogLines<SessionLogEvent, Fields> {
  return {
    answered: says(
      "info",
      (f) =>
        `POST ${String(f["path"])} ${String(f["status"])} ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`,
    ),
    "no-answer": says(
      "error",
      (f) => `POST ${String(f["path"])} no answer ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`,
    ),
    "signed-in": says("info", () => "Signed in"),
    revoked: says("info", () => "Revoked"),
    "lock-wait": says("debug", () => "Waiting for the refresh lock"),
    "lock-taken": says("debug", () => "Refresh lock taken; reading the tokens from storage"),
    "fresh-in-storage": says("debug", () => "Fresh tokens found in storage; the lock is not taken"),
    "fresh-while-waiting": says(
      "debug",
      () => "Fresh tokens stored by another process while waiting; the lock is not taken",
    ),
    "lock-lost": says(
      "warn",
      () =>
        "The refresh lock was taken over while this process held it (paused?); nothing was sent; taking the lock again",
    ),
    "intent-wait": says(
      "info",
      (f) => `Waiting for the refresh by ${holder(f)} with the same refresh token to be stored`,
    ),
    "intent-holder-gone": says(
      "warn",
      (f) =>
        `The refresh intent on this refresh token was left by ${holder(f)}, which has exited; presenting the token (if its request had reached the tenant, the tenant ends the session)`,
    ),
    "intent-expired": says(
      "warn",
      (f) =>
        `The refresh by ${holder(f)} with this refresh token was not stored, nor its intent rewritten by a live holder, while this process watched it for intentWaitMs (${String(f["intentWaitMs"])} ms) with the storage answering; presenting the token (if that refresh had reached the tenant, the tenant ends the session)`,
    ),
    "intent-unwritable": says(
      "warn",
      () =>
        "The refresh intent could not be stored; the refresh is not sent (no intent, no send), and the next call tries again",
    ),
    "intent-unreadable": says(
      "warn",
      (f) =>
        `The value under ${String(f["key"])} is not a refresh intent record (this kit did not write it); it reads as no intent, and the next refresh intent replaces it`,
    ),
    "intent-beat-failed": says(
      "debug",
      () =>
        "The refresh intent could not be rewritten to show this process still waits for its refresh (the storage did not answer); the next beat tries again",
    ),
    "refresh-started": says("info", () => "Refresh started"),
    "tokens-changed": says("info", () => "The stored tokens changed before the refresh left; using them"),
    "refresh-retry": says(
      "warn",
      (f) =>
        `Refresh attempt ${String(f["attempt"])} failed (${f["status"] ? "HTTP " + String(f["status"]) : "no connection"}); retrying in ${String(f["delayMs"])}ms`,
    ),
    "refresh-not-retried": says(
      "warn",
      () =>
        "The refresh failed after its request may have reached the tenant; not retried (the refresh token may have been rotated)",
    ),
    "session-ended": says("warn", () => "Session ended (invalid_grant)"),
    "refresh-finished": says("info", () => "Refresh finished"),
    "refresh-unsaved": says(
      "warn",
      () => "Refresh finished, but the tokens could not be stored; the write is retried on a later call",
    ),
    "rewrite-failed": says(
      "warn",
      () => "The tokens could not be written again (storage or lock unavailable); they stay in use",
    ),
    "tokens-unreadable": says("warn", (f) => `The stored tokens were unreadable: ${String(f["reason"])}`),
    "pending-fallback": says("warn", (f) => {
      const missing = String(f["missing"]);
      const take = missing.includes("take")
        ? "; pending sign-ins are taken with get then delete, which is not atomic (two callbacks of one state may both exchange the code)"
        : "";
      const expiring = missing.includes("setExpiring")
        ? "; a sign-in begun and never completed stays in the storage until the app removes it"
        : "";
      return `The storage has no ${missing}${take}${expiring}`;
    }),
    "pending-unreadable": says(
      "warn",
      (f) =>
        `The value under ${String(f["key"])} is not a pending sign-in record; it was dropped, and the callback is refused as no pending sign-in`,
    ),
  };
}

/**
 * Makes the manager's `logger` option: writes one line per event at or above `level` to `logger`,
 * e.g. `{ method: 'POST', path: '/oauth/token', status: 200, durationMs: 41, attempt: 1 } POST
 * /oauth/token 200 41ms (attempt 1)`. The logger's methods are called on the logger (pino needs its
 * `this`), and a logger that throws is ignored: logging never changes the outcome.
 *
 * @param logger - `console`, pino, or any {@link Logger}
 * @param level - the least severe level written (default `"info"`: one line per request, refreshes,
 * sign-in, revocation; `"debug"` adds lock waits and storage reads); `"silent"` writes nothing
 * @returns the `logger` option of `createTokenManager`
 * @throws a `TokenManagerError` with code `INVALID_OPTIONS` when `level` is not a {@link LogLevel}.
 * @example
 * ```ts
 * const tm = createTokenManager({ ...options, logger: logSessionTo(console, "debug") });
 * ```
 * @see RFC 6750 §5.1 (tokens must not leak through logs), RFC 6749 §10.3 (access tokens kept confidential)
 */
export function logSessionTo(logger: Logger, level: LogLevel = "info"): SessionLogger {
  if (!isLogLevel(level)) fail("INVALID_OPTIONS", "logLevel: use debug, info, warn, error or silent");
  const write = lineWriter(logger, level, lines());
  if (level === "debug") return write;
  // A session's id may be personal data (an e-mail address): written at debug level only.
  return (event, fields) => {
    if (!("sessionId" in fields)) return write(event, fields);
    const { sessionId: _, ...rest } = fields;
    write(event, rest);
  };
}
