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

/**
 * Where log lines go. Pino-style: fields first, message second; `console` fits as is, and so does a
 * pino or bunyan logger. Every method is optional: a missing one drops lines of its level.
 *
 * @example
 * ```ts
 * createTokenManager({ ...options, logger: logSessionTo(console, "debug") });
 * ```
 * @see RFC 9700 §4.3
 */
export interface Logger {
  debug?(fields: Record<string, unknown>, message: string): void;
  info?(fields: Record<string, unknown>, message: string): void;
  warn?(fields: Record<string, unknown>, message: string): void;
  error?(fields: Record<string, unknown>, message: string): void;
}

/**
 * The least severe level that is written; `"silent"` writes nothing.
 *
 * @example
 * ```ts
 * const level: LogLevel = "warn"; // warnings and errors only
 * ```
 * @see RFC 9700 §4.3
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

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
  | "refresh-started"
  | "tokens-changed"
  | "refresh-retry"
  | "refresh-not-retried"
  | "session-ended"
  | "refresh-finished"
  | "refresh-unsaved"
  | "rewrite-failed";

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
const holder = (f: Fields): string => (f["pid"] === undefined ? "another process" : `process ${String(f["pid"])} on ${String(f["host"] ?? "an unknown host")}`);

/** Each event's level and message. */
const LINES: Record<SessionLogEvent, readonly [Exclude<LogLevel, "silent">, (fields: Fields) => string]> = {
  answered: ["info", (f) => `POST ${String(f["path"])} ${String(f["status"])} ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`],
  "no-answer": ["error", (f) => `POST ${String(f["path"])} no answer ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`],
  "signed-in": ["info", () => "Signed in"],
  revoked: ["info", () => "Revoked"],
  "lock-wait": ["debug", () => "Waiting for the refresh lock"],
  "lock-taken": ["debug", () => "Refresh lock taken; reading the tokens from storage"],
  "fresh-in-storage": ["debug", () => "Fresh tokens found in storage; the lock is not taken"],
  "fresh-while-waiting": ["debug", () => "Fresh tokens stored by another process while waiting; the lock is not taken"],
  "lock-lost": ["warn", () => "The refresh lock was taken over while this process held it (paused?); nothing was sent; taking the lock again"],
  "intent-wait": ["info", (f) => `Waiting for the refresh by ${holder(f)} with the same refresh token to be stored`],
  "intent-holder-gone": ["warn", (f) => `The refresh intent on this refresh token was left by ${holder(f)}, which has exited; presenting the token (if its request had reached the tenant, the tenant ends the session)`],
  "intent-expired": ["warn", (f) => `The refresh by ${holder(f)} with this refresh token was not stored within intentWaitMs (${String(f["intentWaitMs"])} ms); presenting the token (if that refresh had reached the tenant, the tenant ends the session)`],
  "intent-unwritable": ["warn", () => "The refresh intent could not be stored; refreshing under the lock alone"],
  "refresh-started": ["info", () => "Refresh started"],
  "tokens-changed": ["info", () => "The stored tokens changed before the refresh left; using them"],
  "refresh-retry": ["warn", (f) => `Refresh attempt ${String(f["attempt"])} failed (${f["status"] ? "HTTP " + String(f["status"]) : "no connection"}); retrying in ${String(f["delayMs"])}ms`],
  "refresh-not-retried": ["warn", () => "The refresh failed after its request may have reached the tenant; not retried (the refresh token may have been rotated)"],
  "session-ended": ["warn", () => "Session ended (invalid_grant)"],
  "refresh-finished": ["info", () => "Refresh finished"],
  "refresh-unsaved": ["warn", () => "Refresh finished, but the tokens could not be stored; the write is retried on a later call"],
  "rewrite-failed": ["warn", () => "The tokens could not be written again (storage or lock unavailable); they stay in use"],
};

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
 * @see RFC 6750 §5.1 (tokens must not leak through logs), RFC 9700 §4.3
 */
export function logSessionTo(logger: Logger, level: LogLevel = "info"): SessionLogger {
  const threshold = LEVELS.indexOf(level);
  if (threshold < 0) fail("INVALID_OPTIONS", "logLevel: use debug, info, warn, error or silent");
  return (event, fields) => {
    const [name, message] = LINES[event];
    if (LEVELS.indexOf(name) < threshold) return;
    try {
      logger[name]?.(fields, message(fields));
    } catch {
      // A failing logger is the app's problem; the token flow goes on.
    }
  };
}
