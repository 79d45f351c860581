/**
 * Internal: the `Retry-After` rule, the client's too (`packages/internal/src/retry-after.ts`), and
 * the Python kit's `parse_retry_after`.
 *
 * @see RFC 9110 §10.2.3 (Retry-After)
 */
export { parseRetryAfter } from "@tenant-integration/internal";
