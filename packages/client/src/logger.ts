/**
 * The logger option of the client. The {@link Logger} shape, the levels and how a line reaches the
 * logger are the token manager's too (`packages/internal/src/logger.ts`), so one logger serves
 * both.
 *
 * @packageDocumentation
 */
import { TenantClientError } from "./errors.js";
import {
  isLogLevel,
  lineWriter,
  type LineLevel,
  type Logger,
  type LogLevel,
  type LogLine,
  type LogLines,
} from "@tenant-integration/internal";

export type { Logger, LogLevel };

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

/** What the client reports with an event: the request, and the event's own fields. */
interface Reported {
  readonly request: Request;
  readonly fields: Fields;
}

/**
 * A line about a request: the fields get its `method` and `path` (without query) first, and the
 * message starts with them, followed by `tail`.
 */
function about(
  level: LineLevel,
  tail: (fields: Fields) => string,
): readonly [LineLevel, (reported: Reported) => LogLine] {
  const line = ({ request, fields }: Reported): LogLine => {
    const { method } = request;
    const path = new URL(request.url).pathname;
    return [{ method, path, ...fields }, `${method} ${path}${tail(fields)}`];
  };
  return [level, line];
}

/**
 * Each event's level and the message after `METHOD /path`: made when a logger is (a table built at
 * import would ship with every app, logging or not, once the package is one module).
 */
function lines(): LogLines<LogEvent, Reported> {
  return {
    token: about("debug", () => ": asking the token source for a token"),
    "keep-copy": about("debug", () => ": keeping a copy of the request body for a possible retry"),
    "stream-body": about("debug", () => ": the request body is a stream; it will not be sent again"),
    answered: about(
      "info",
      (f) => ` ${String(f["status"])} ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`,
    ),
    failed: about(
      "error",
      (f) => ` failed: ${String(f["code"])} after ${String(f["durationMs"])}ms (attempt ${String(f["attempt"])})`,
    ),
    retry: about(
      "warn",
      (f) =>
        ` ${String(f["status"] ?? f["error"])}: retry in ${String(f["delayMs"])}ms (attempt ${String(f["attempt"])})`,
    ),
    refreshing: about("info", () => " 401: refreshing the token through the token source"),
    "session-ended": about("warn", () => ": session ended, the token source could not give a new token"),
    "no-new-token": about("warn", () => " 401: the token source has no new token; returning the 401"),
    refreshed: about("info", () => ": token refreshed, sending again"),
  };
}

/**
 * Makes the client's `logger` option: writes one line per event at or above `level` to `logger`.
 * The fields get the request's `method` and `path` (without query) first, and the message starts
 * with them, e.g. `GET /api/v1/auth/user 200 12ms (attempt 1)`. Levels: `debug` for token requests
 * to the strategy and bodies kept for a replay; `info` for each attempt and a refresh-and-retry
 * after 401; `warn` for a retry being scheduled and the session ending; `error` for an attempt that
 * failed on the network. A logger that throws does not fail the request. Lines never contain a
 * token, a header value, a query string or a body.
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
  if (!isLogLevel(level))
    throw new TenantClientError("INVALID_OPTIONS", "Invalid logLevel: use debug, info, warn, error or silent");
  const write = lineWriter(logger, level, lines());
  return (event, request, fields) => write(event, { request, fields });
}
