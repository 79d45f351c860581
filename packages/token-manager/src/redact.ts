/**
 * Redaction: a wrapper that never prints its value, and a scrubber for messages and `cause` chains.
 *
 * @see OAuth 2.0 Security BCP (RFC 9700) §4.3; RFC 6749 §10.3, §10.4 (tokens kept confidential)
 */

/** What every printing path of a {@link Secret} shows. */
export const REDACTED = "[redacted]";

const redacted = (): string => REDACTED;

/**
 * Holds a token, code or verifier (or a record of them). `String()`, template literals,
 * `JSON.stringify` and `util.inspect` all print `[redacted]`; only `reveal()` gives the value, which
 * lives in a closure, so no property, own or inherited, holds it.
 *
 * @example
 * ```ts
 * const s = secret("at_123");
 * `${s}`;              // "[redacted]"
 * JSON.stringify({ s }); // '{"s":"[redacted]"}'
 * s.reveal();          // "at_123"
 * ```
 * @see RFC 6749 §10.3
 */
export interface Secret<T = string> {
  /** The value itself. Call it only where the value must leave: a header, a request body, storage. */
  reveal(): T;
  /** @returns `"[redacted]"` */
  toString(): string;
  /** @returns `"[redacted]"` */
  toJSON(): string;
}

/**
 * Wraps a value in a {@link Secret}. A closure, not a class with a private field: smaller once minified.
 *
 * @example
 * ```ts
 * secret("at_123").reveal(); // "at_123"
 * ```
 * @see RFC 6749 §10.3
 */
export const secret = <T = string>(value: T): Secret<T> => ({
  reveal: () => value,
  toString: redacted,
  toJSON: redacted,
  // Node's util.inspect and console.log.
  [Symbol.for("nodejs.util.inspect.custom")]: redacted,
});

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`.
 *
 * @example
 * ```ts
 * scrub("bad token at_123", ["at_123"]); // "bad token [redacted]"
 * ```
 * @see RFC 9700 §4.3
 */
export function scrub(text: string, secrets: readonly string[]): string {
  for (const s of secrets) if (s) text = text.split(s).join(REDACTED);
  return text;
}

/**
 * Copies an error and its `cause` chain (up to 4 levels) into plain `Error`s whose `name` and
 * `message` are scrubbed of the secrets. Nothing else is copied, so request bodies, headers or
 * responses hanging on the original never reach the caller.
 *
 * @example
 * ```ts
 * throw new TransientError(undefined, 1, sanitize(fetchError, [refreshToken]));
 * ```
 * @see RFC 9700 §4.3
 */
export function sanitize(error: unknown, secrets: readonly string[], depth = 0): Error {
  const e = (error ?? {}) as { name?: unknown; message?: unknown; cause?: unknown };
  const copy = new Error(
    scrub(String(e.message ?? error), secrets),
    depth < 4 && e.cause !== undefined ? { cause: sanitize(e.cause, secrets, depth + 1) } : undefined,
  );
  copy.name = scrub(String(e.name ?? "Error"), secrets);
  return copy;
}
