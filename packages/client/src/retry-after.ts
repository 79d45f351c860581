/**
 * Internal: a `Retry-After` value (delay-seconds or an HTTP date) as a delay in milliseconds, or
 * `undefined` when absent or unreadable. A date in the past gives 0.
 *
 * @see RFC 9110 §10.2.3 (Retry-After), §5.6.7 (HTTP-date: every form starts with a weekday)
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  const v = value?.trim() ?? "";
  if (/^\d+$/.test(v)) return +v * 1000;
  const at = /^[a-z]{3,9},? /i.test(v) ? Date.parse(v) : NaN;
  return at >= 0 ? Math.max(0, at - now) : undefined;
}
