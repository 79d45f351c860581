/**
 * Redaction: a closure that never prints its value, and a scrubber for messages and `cause` chains.
 *
 * @see OAuth 2.0 Security BCP (RFC 9700) §4.3; RFC 6749 §10.3, §10.4 (tokens kept confidential)
 */

/**
 * A token record (or any secret) held in a closure: a function that returns it. A function is
 * redacted by construction: `JSON.stringify` omits it, `String()` gives only its source text and
 * `util.inspect` only `[Function]`, so printing it never shows the value, and no property holds it.
 *
 * @example
 * ```ts
 * const tokens = held({ access_token: "at_123" });
 * JSON.stringify({ tokens }); // "{}"
 * tokens().access_token;      // "at_123"
 * ```
 * @see RFC 6749 §10.3
 */
export type Held<T> = () => T;

/**
 * Holds `value` in a {@link Held} closure. Call the result only where the value must leave: a header,
 * a request body, storage.
 *
 * @example
 * ```ts
 * held("at_123")(); // "at_123"
 * ```
 * @see RFC 6749 §10.3
 */
export const held =
  <T>(value: T): Held<T> =>
  () =>
    value;

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
  // A string pattern is matched literally, and the replacement holds no "$" pattern.
  for (const s of secrets) if (s) text = text.replaceAll(s, "[redacted]");
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
    (depth < 4 && e.cause !== undefined && { cause: sanitize(e.cause, secrets, depth + 1) }) as ErrorOptions,
  );
  copy.name = scrub(String(e.name ?? "Error"), secrets);
  return copy;
}
