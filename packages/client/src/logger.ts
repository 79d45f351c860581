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
 * createTenantClient({ baseUrl, auth, logger: console, logLevel: "debug" });
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
 * createTenantClient({ baseUrl, auth, logger: console, logLevel: "warn" }); // retries, session ends, network errors
 * ```
 * @see RFC 5424 §6.2.1 (severity levels)
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/**
 * Internal: writes one line about `request` at `level`: the fields get the request's `method` and
 * `path` (without query) first, and the message starts with them, e.g. `GET /api/v1/auth/user 200
 * 12ms (attempt 1)`. It never throws.
 */
export type Log = (level: Exclude<LogLevel, "silent">, request: Request, fields: Record<string, unknown>, message: string) => void;

/**
 * Internal: `logger` filtered by `level`, or `undefined` when nothing would be written (so the hot
 * path can skip building fields and reading the clock).
 *
 * @throws {@link TenantClientError} `INVALID_OPTIONS` for an unknown level
 */
export function levelled(logger: Logger | undefined, level: LogLevel = "info"): Log | undefined {
  const threshold = LEVELS.indexOf(level);
  if (threshold < 0) throw new TenantClientError("INVALID_OPTIONS", "Invalid logLevel: use debug, info, warn, error or silent");
  if (!logger || level === "silent") return undefined;
  return (name, request, fields, message) => {
    if (LEVELS.indexOf(name) < threshold) return;
    const { method } = request;
    const path = new URL(request.url).pathname;
    try {
      // called as a method: pino's methods need their `this`
      logger[name]?.({ method, path, ...fields }, `${method} ${path}${message}`);
    } catch {
      // a failing logger must not fail the request
    }
  };
}
