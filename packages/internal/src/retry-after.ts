/**
 * A `Retry-After` value (delay-seconds or an HTTP date) as a delay in milliseconds, or `undefined`
 * when absent or unreadable. A date in the past gives 0. The same rule as the Python kit's
 * `parse_retry_after`.
 *
 * @example
 * ```ts
 * parseRetryAfter("120", Date.now()); // 120000
 * parseRetryAfter("soon", Date.now()); // undefined
 * ```
 * @see RFC 9110 §10.2.3 (Retry-After), §5.6.7 (HTTP-date: every form starts with a weekday)
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  const text = value?.trim() ?? "";
  const isDelaySeconds = /^\d+$/.test(text);
  if (isDelaySeconds) return Number(text) * 1000;
  // Date.parse reads far more than HTTP dates ("5", "2025"); an HTTP date starts with a weekday
  const looksLikeHttpDate = /^[a-z]{3,9},? /i.test(text);
  if (!looksLikeHttpDate) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at) || at < 0) return undefined;
  return Math.max(0, at - now);
}
