/**
 * Redaction: a scrubber for messages and `cause` chains. (The token record itself never leaves the
 * manager's closure, so there is nothing else to redact.)
 *
 * A server may echo what it was sent, and not always as it was sent: the revocation body is a form
 * (percent-encoded, `+` for a space), the token request is JSON (`"` and `\` escaped), and an echo may
 * be cut short. So each secret is looked for in every form the kit itself sends it in, and a start of
 * one that is at least {@link MIN_SECRET_PREFIX} characters long counts as the secret.
 *
 * @see OAuth 2.0 Security BCP (RFC 9700) §4.3; RFC 6749 §10.3, §10.4 (tokens kept confidential)
 */

const REDACTED = "[redacted]";

/**
 * The shortest start of a secret that is scrubbed when a server cuts the secret short: 8 characters,
 * 48 bits of a random base64url token, too much to leave in an error, and long enough that ordinary
 * words do not match. A shorter secret is scrubbed only whole.
 *
 * @example
 * ```ts
 * scrub("echo: rt_abcdefgh", ["rt_abcdefghijklmnop"]); // "echo: [redacted]" (8 characters of its start)
 * ```
 * @see RFC 9700 §4.3
 */
export const MIN_SECRET_PREFIX = 8;

/**
 * The forms in which the kit sends `secret`, and so in which a server may echo it: as is,
 * percent-encoded (`encodeURIComponent`), form-encoded (`URLSearchParams`: `+` for a space, and `!'()~`
 * encoded too), and JSON-escaped.
 *
 * @example
 * ```ts
 * secretForms('a+b"c'); // ['a+b"c', "a%2Bb%22c", 'a+b\\"c']
 * ```
 * @see RFC 3986 §2.1 (percent-encoding); WHATWG URL §5.2 (application/x-www-form-urlencoded); RFC 8259 §7 (JSON strings)
 */
export function secretForms(secret: string): string[] {
  const percent = encodeURIComponent(secret);
  const form = new URLSearchParams({ s: secret }).toString().slice(2);
  const json = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, percent, form, json])];
}

/** How many characters of `form` match `text` from index `at`. */
function matchLength(text: string, at: number, form: string): number {
  let n = 0;
  while (n < form.length && text[at + n] === form[n]) n++;
  return n;
}

/**
 * Replaces each secret in `text` with `[redacted]`, in every form of {@link secretForms}, whole or cut
 * short (a start of at least {@link MIN_SECRET_PREFIX} characters); empty or absent secrets are
 * skipped. At each place the longest match of any form wins, so forms that begin alike leave no tail.
 *
 * @example
 * ```ts
 * scrub("bad token at_123", ["at_123"]);                 // "bad token [redacted]"
 * scrub("token=rt_%2Babcdefgh&x=1", ["rt_+abcdefghijk"]); // "token=[redacted]&x=1"
 * ```
 * @see RFC 9700 §4.3
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  for (const secret of secrets) {
    if (!secret) continue;
    const forms = secretForms(secret);
    let out = "";
    let copied = 0;
    let at = 0;
    while (at < text.length) {
      let longest = 0;
      for (const form of forms) {
        const n = matchLength(text, at, form);
        if ((n === form.length || n >= MIN_SECRET_PREFIX) && n > longest) longest = n;
      }
      if (longest) {
        out += text.slice(copied, at) + REDACTED;
        at += longest;
        copied = at;
      } else {
        at++;
      }
    }
    text = out + text.slice(copied);
  }
  return text;
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/**
 * Copies an error and everything it wraps (its `cause`, and the `errors` of an `AggregateError`, at
 * any depth) into plain `Error`s and `AggregateError`s whose `name` and `message` are scrubbed of the
 * secrets. Nothing else is copied, so request bodies, headers or responses hanging on the original
 * never reach the caller. An error met again further down (a cycle) is left out there.
 *
 * @example
 * ```ts
 * throw new TransientError(undefined, 1, sanitize(fetchError, [refreshToken]));
 * ```
 * @see RFC 9700 §4.3
 */
export function sanitize(error: unknown, secrets: readonly (string | undefined)[], seen = new Set<unknown>()): Error {
  seen.add(error);
  const e = (error ?? {}) as ErrorLike;
  const copyOf = (inner: unknown) => (seen.has(inner) ? [] : [sanitize(inner, secrets, seen)]);
  const [cause] = e.cause === undefined ? [] : copyOf(e.cause);
  const message = scrub(String(e.message ?? error), secrets);
  // `cause` (and `errors`) passed to the constructors stay non-enumerable, as on native errors.
  const options = (cause && { cause }) as ErrorOptions;
  const copy = Array.isArray(e.errors) ? new AggregateError(e.errors.flatMap(copyOf), message, options) : new Error(message, options);
  copy.name = scrub(String(e.name ?? "Error"), secrets);
  // A stable error code (FileStorageError's FILE_CORRUPT, a system error's EROFS) lets callers branch
  // on the cause; other fields are not copied, since any of them could hold a secret.
  if (typeof e.code === "string") (copy as Error & { code?: string }).code = scrub(e.code, secrets);
  return copy;
}
