/**
 * Logging: an optional, pino-shaped logger (fields first, message second) that `console` fits as is.
 * The manager writes only fields it builds itself (method, path, status, durations, attempts, expiry
 * times); never a token, code, verifier, state, header value or body.
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
 * createTokenManager({ ...options, logger: console, logLevel: "debug" });
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

/** Writes one line at `level`, or nothing when `level` is below the chosen one. */
export type Log = (level: Exclude<LogLevel, "silent">, fields: Record<string, unknown>, message: string) => void;

/**
 * Binds `logger` and `level` into a {@link Log}. The logger's methods are called on the logger (pino
 * needs its `this`), and a logger that throws is ignored: logging never changes the outcome.
 *
 * @throws a `TokenManagerError` with code `INVALID_OPTIONS` when `level` is not a {@link LogLevel}.
 * @example
 * ```ts
 * const log = createLog(console, "info");
 * log("info", { method: "POST", path: "/oauth/token" }, "POST /oauth/token 200 12ms (attempt 1)");
 * ```
 * @see RFC 9700 §4.3
 */
export function createLog(logger: Logger | undefined, level: LogLevel = "info"): Log {
  const threshold = LEVELS.indexOf(level);
  if (threshold < 0) fail("INVALID_OPTIONS", "logLevel");
  return (name, fields, message) => {
    if (!logger || LEVELS.indexOf(name) < threshold) return;
    try {
      logger[name]?.(fields, message);
    } catch {
      // A failing logger is the app's problem; the token flow goes on.
    }
  };
}
