/**
 * Parses a `Retry-After` header value into a delay in milliseconds. The value is either a number of
 * seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`); a date in the past gives 0.
 *
 * @param value - the header value, or `null` when absent
 * @param now - the current time in milliseconds since the epoch (injected for tests)
 * @returns the delay in milliseconds, or `undefined` when absent or unreadable
 * @example
 * ```ts
 * parseRetryAfter("3", Date.now()); // 3000
 * parseRetryAfter(new Date(Date.now() + 5000).toUTCString(), Date.now()); // about 5000
 * ```
 * @see RFC 9110 §10.2.3 (Retry-After)
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // every HTTP-date form (IMF-fixdate, RFC 850, asctime) starts with a weekday; refuse looser strings
  if (!/^[A-Za-z]{3,9},? /.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
