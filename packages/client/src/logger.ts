/**
 * The logger option of the client: the same shape as the token manager's, so one logger serves both.
 *
 * @packageDocumentation
 */
import { TenantClientError } from "./errors.js";

/**
 * Where the client writes what it does. Pino-style: fields first, message second; `console` fits
 * as is, and so does a pino or bunyan logger. Every method is optional; a missing one is skipped.
 *
 * Lines never contain a token, a header value, a query string or a body: fields are limited to
 * method, path (without query), status, durationMs, attempt, delayMs and error names/codes.
 *
 * @example
 * ```ts
 * createTenantClient({ baseUrl, auth, logger: logTo(console, "debug") });
 * ```
 * @see RFC 6750 §5.1 (tokens must not leak through logs)
 */
export interface Logger {
  /** Detail: token requests to the strategy, bodies kept for replay. */
  debug?(fields: Record<string, unknown>, message: string): void;
  /** One line per HTTP attempt, and the start and end of a refresh-and-retry after 401. */
  info?(fields: Record<string, unknown>, message: string): void;
  /** A retry being scheduled; the session ending (the strategy failed to give a new token after 401). */
  warn?(fields: Record<string, unknown>, message: string): void;
  /** An attempt that failed on the network. */
  error?(fields: Record<string, unknown>, message: string): void;
}

/**
 * The lowest level written; `"silent"` writes nothing.
 *
 * @example
 * ```ts
 * createTenantClient({ baseUrl, auth, logger: logTo(console, "warn") }); // retries, session ends, network errors
 * ```
 * @see RFC 5424 §6.2.1 (severity levels)
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/** Internal: what the client reports to its log; {@link logTo} turns each into a line. */
export type LogEvent =
  | "token"
  | "keep-copy"
  | "stream-body"
  | "answered"
  | "failed"
  | "retry"
  | "refreshing"
  | "session-ended"
  | "no-new-token"
  | "refreshed";

/**
 * The client's `logger` option: a function made by {@link logTo}, which the client calls with what
 * happened to a request. The client holds no logging code of its own, so an app that does not log
 * does not ship any.
 */
export type ClientLogger = (event: LogEvent, request: Request, fields: Record<string, unknown>) => void;

/** Internal: the client's log, or `undefined` when nothing is written. */
export type Log = ClientLogger;

type Fields = Record<string, unknown>;

/** Each event's level and the message after `METHOD /path`. */
const LINES: Record<LogEvent, readonly [Exclude<LogLevel, "silent">, (fields: Fields) => string]> = {
  token: ["debug", () => ": asking the auth strategy for a token"],
  "keep-copy": ["debug", () => ": keeping a copy of the request body for a possible retry"],
  "stream-body": ["debug", () => ": the request body is a stream; it will not be sent again"],
  answered: ["info", (f) => ` ${String(f["status"])} ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`],
  failed: ["error", (f) => ` failed: ${String(f["code"])} after ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`],
  retry: ["warn", (f) => ` ${String(f["status"] ?? f["error"])}: retry in ${String(f["delayMs"])}ms (attempt ${String(f["attempt"])})`],
  refreshing: ["info", () => " 401: refreshing the token through the auth strategy"],
  "session-ended": ["warn", () => ": session ended, the auth strategy could not give a new token"],
  "no-new-token": ["warn", () => " 401: the auth strategy has no new token; returning the 401"],
  refreshed: ["info", () => ": token refreshed, sending again"],
};

/**
 * Makes the client's `logger` option: writes one line per event at or above `level` to `logger`.
 * The fields get the request's `method` and `path` (without query) first, and the message starts
 * with them, e.g. `GET /api/v1/auth/user 200 12ms (attempt 1)`. A logger that throws does not fail
 * the request.
 *
 * @param logger - `console`, pino, or any {@link Logger}
 * @param level - the lowest level written (default `"info"`); `"silent"` writes nothing
 * @returns the `logger` option of `createTenantClient`
 * @throws {@link TenantClientError} `INVALID_OPTIONS` for an unknown level
 * @example
 * ```ts
 * const client = createTenantClient({ baseUrl, auth, logger: logTo(console, "debug") });
 * ```
 * @see RFC 6750 §5.1 (tokens must not leak through logs), RFC 5424 §6.2.1 (severity levels)
 */
export function logTo(logger: Logger, level: LogLevel = "info"): ClientLogger {
  const threshold = LEVELS.indexOf(level);
  if (threshold < 0) throw new TenantClientError("INVALID_OPTIONS", "Invalid logLevel: use debug, info, warn, error or silent");
  return (event, request, fields) => {
    const [name, message] = LINES[event];
    if (LEVELS.indexOf(name) < threshold) return;
    const { method } = request;
    const path = new URL(request.url).pathname;
    try {
      // called as a method: pino's methods need their `this`
      logger[name]?.({ method, path, ...fields }, `${method} ${path}${message(fields)}`);
    } catch {
      // a failing logger must not fail the request
    }
  };
}
