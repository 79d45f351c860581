/**
 * Redaction: a scrubber for messages and `cause` chains. (The token record itself never leaves the
 * manager's closure, so there is nothing else to redact.)
 *
 * @see OAuth 2.0 Security BCP (RFC 9700) §4.3; RFC 6749 §10.3, §10.4 (tokens kept confidential)
 */

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`; empty or absent secrets are skipped.
 *
 * @example
 * ```ts
 * scrub("bad token at_123", ["at_123"]); // "bad token [redacted]"
 * ```
 * @see RFC 9700 §4.3
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
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
export function sanitize(error: unknown, secrets: readonly (string | undefined)[], depth = 0): Error {
  const e = (error ?? {}) as { name?: unknown; message?: unknown; cause?: unknown };
  const copy = new Error(
    scrub(String(e.message ?? error), secrets),
    (depth < 4 && e.cause !== undefined && { cause: sanitize(e.cause, secrets, depth + 1) }) as ErrorOptions,
  );
  copy.name = scrub(String(e.name ?? "Error"), secrets);
  return copy;
}
