/**
 * Internal: a `Retry-After` value (delay-seconds or an HTTP date) as a delay in milliseconds, or
 * `undefined` when absent or unreadable. A date in the past gives 0. The same rule as the client
 * package's `retry-after.ts` and the Python kit's `parse_retry_after`; the token manager may not
 * import the client, so the rule stands in both until they share an internal module.
 *
 * @example parseRetryAfter("120", Date.now()) // 120000
 * @see RFC 9110 §10.2.3 (Retry-After), §5.6.7 (HTTP-date: every form starts with a weekday)
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  const text = value?.trim() ?? "";
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Date.parse reads far more than HTTP dates ("5", "2025"); an HTTP date starts with a weekday.
  if (!/^[a-z]{3,9},? /i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at) || at < 0) return undefined;
  return Math.max(0, at - now);
}
