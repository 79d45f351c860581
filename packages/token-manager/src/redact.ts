/**
 * Redaction: the manager scrubs messages and `cause` chains (the token record itself never leaves
 * the manager, so there is nothing else to redact). The rule, and {@link scrub} and
 * {@link sanitize}, are the client's too: they live in `@tenant-integration/internal`
 * (`packages/internal/src/redact.ts`), one home for both packages, so the two cannot drift apart.
 *
 * @see OAuth 2.0 Security BCP (RFC 9700) §4.3; RFC 6749 §10.3, §10.4 (tokens kept confidential)
 */
export { MIN_SECRET_PREFIX, REDACTED, sanitize, scrub, secretForms } from "@tenant-integration/internal";
