/**
 * What both kits' logger factories share (the client's `logTo`, the token manager's
 * `logSessionTo`): the {@link Logger} shape, the levels, and how a line reaches the logger. Each kit
 * keeps its own events and their wording; this module is imported only through those factories, so
 * an app that does not log ships none of it.
 *
 * @see RFC 6750 §5.1 (tokens must not leak through logs), RFC 5424 §6.2.1 (severity levels)
 */

/**
 * Where log lines go. Pino-style: fields first, message second; `console` fits as is, and so does a
 * pino or bunyan logger. Every method is optional: a missing one drops the lines of its level. The
 * client and the token manager take the same shape, so one logger serves both.
 *
 * Lines never carry a token, a code, a verifier, a state, a header value, a query string or a body.
 *
 * @example
 * ```ts
 * createTenantClient({ baseUrl, auth, logger: logTo(console, "debug") });
 * createTokenManager({ ...options, logger: logSessionTo(console, "debug") });
 * ```
 * @see RFC 6750 §5.1
 */
export interface Logger {
  /** Detail: token requests, lock waits, storage reads, request bodies kept for a replay. */
  debug?(fields: Record<string, unknown>, message: string): void;
  /** One line per HTTP request or attempt; sign-in, refresh, revocation. */
  info?(fields: Record<string, unknown>, message: string): void;
  /** A retry being scheduled; the session ending; tokens that could not be stored. */
  warn?(fields: Record<string, unknown>, message: string): void;
  /** A request that got no answer. */
  error?(fields: Record<string, unknown>, message: string): void;
}

/**
 * The least severe level that is written; `"silent"` writes nothing.
 *
 * @example
 * ```ts
 * const level: LogLevel = "warn"; // warnings and errors only
 * ```
 * @see RFC 5424 §6.2.1 (severity levels)
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** The levels, least severe first. */
const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/** The level of a line: any but `"silent"`. */
export type LineLevel = Exclude<LogLevel, "silent">;

/** A line as the logger receives it: its fields and its message. */
export type LogLine = readonly [fields: Record<string, unknown>, message: string];

/** A kit's events: each one's level, and how its line is made from what the kit reports. */
export type LogLines<Event extends string, Input> = Record<Event, readonly [LineLevel, (input: Input) => LogLine]>;

/**
 * Whether `level` is one of the {@link LogLevel}s (each kit refuses another with its own error,
 * code `INVALID_OPTIONS`).
 *
 * @example
 * ```ts
 * isLogLevel("verbose"); // false
 * ```
 */
export function isLogLevel(level: unknown): level is LogLevel {
  return LEVELS.includes(level as LogLevel);
}

/**
 * Makes the function a kit calls with each event: at or above `level` it makes the event's line and
 * hands it to the logger's method of that level, called on the logger (pino needs its `this`); below
 * it the line is not even made. A logger that throws is ignored: logging never changes the outcome.
 *
 * @param logger - `console`, pino, or any {@link Logger}
 * @param level - the least severe level written, already checked with {@link isLogLevel}
 * @param lines - the kit's events, their levels and lines
 * @example
 * ```ts
 * const write = lineWriter(console, "info", { "signed-in": ["info", (fields) => [fields, "Signed in"]] });
 * write("signed-in", {}); // console.info({}, "Signed in")
 * ```
 * @see RFC 5424 §6.2.1
 */
export function lineWriter<Event extends string, Input>(
  logger: Logger,
  level: LogLevel,
  lines: LogLines<Event, Input>,
): (event: Event, input: Input) => void {
  const threshold = LEVELS.indexOf(level);
  return (event, input) => {
    const [name, line] = lines[event];
    if (LEVELS.indexOf(name) < threshold) return;
    try {
      logger[name]?.(...line(input));
    } catch {
      // a failing logger is the app's problem; the request or the token flow goes on
    }
  };
}
