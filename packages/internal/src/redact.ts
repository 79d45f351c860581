/**
 * Removing secrets (tokens, codes, verifiers, states) from what an error or a log may carry. One
 * rule for finding a secret, used by both kits; two ways of copying what holds one:
 *
 * - {@link redact}: a deep copy that keeps the value's shape, for values the caller needs (an error
 *   response's body, a fetch error's `cause` chain with its non-enumerable properties and
 *   `AggregateError.errors`); the value itself when it holds no secret.
 * - {@link sanitize}: a copy of an error chain with `name`, `message` and `code` only, for causes
 *   whose other fields are of no use to the caller (a request body, headers hanging on an error).
 *
 * A server may echo what it was sent, and not always as it was sent: a form body is percent-encoded
 * (`+` for a space), a JSON body escapes `"` and `\`, an echo may be cut short. So a secret is looked
 * for in every form {@link secretForms} lists, and a start of a form at least
 * {@link MIN_SECRET_PREFIX} characters long counts as the secret.
 *
 * @see RFC 6750 §5.1, RFC 6749 §10.3 and §10.4 (tokens kept confidential), RFC 9700 §4.3
 */

/** What replaces a secret. */
export const REDACTED = "[redacted]";

/**
 * The shortest start of a secret that is removed when an echo cuts the secret short: 8 characters,
 * 48 bits of a random base64url token, too much to leave in an error, and long enough that ordinary
 * words do not match. A shorter secret is removed only whole.
 *
 * @example
 * ```ts
 * scrub("echo: rt_abcdefgh", ["rt_abcdefghijklmnop"]); // "echo: [redacted]" (8 characters of its start)
 * ```
 * @see RFC 9700 §4.3
 */
export const MIN_SECRET_PREFIX = 8;

/** How deep {@link redact} searches a value; deeper parts are replaced by {@link TOO_DEEP}. */
export const MAX_DEPTH = 64;

/** What replaces a part nested deeper than {@link MAX_DEPTH}: it cannot be checked. */
export const TOO_DEEP = "[redacted: nested too deeply to check]";

/**
 * The forms in which `secret` may be printed, each once, longest first (so that a form containing
 * another is replaced whole): as is, percent-encoded (`encodeURIComponent`) with upper- and
 * lower-case hex, form-encoded (`URLSearchParams`: `+` for a space, and `!'()~` encoded too), and
 * escaped inside a JSON string.
 *
 * @example
 * ```ts
 * secretForms("a b"); // ["a%20b", "a b", "a+b"]
 * ```
 * @see RFC 3986 §2.1 (percent-encoding); WHATWG URL §5.2 (application/x-www-form-urlencoded); RFC 8259 §7 (JSON strings)
 */
export function secretForms(secret: string): string[] {
  const percent = encodeURIComponent(secret);
  const forms = new Set([
    secret,
    percent,
    percent.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    new URLSearchParams({ s: secret }).toString().slice("s=".length),
    JSON.stringify(secret).slice(1, -1),
  ]);
  return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

/**
 * Every form of every secret, each once, longest first; empty and absent secrets are skipped.
 *
 * @example
 * ```ts
 * formsOf([accessToken, undefined]); // the forms of accessToken
 * ```
 */
export function formsOf(secrets: readonly (string | undefined)[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) if (secret) for (const form of secretForms(secret)) forms.add(form);
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Whether `text` holds any of `forms`, whole or by a start of at least {@link MIN_SECRET_PREFIX}
 * characters: {@link redactText} would change it.
 *
 * @example
 * ```ts
 * mentions("Bearer at_abcdefgh", formsOf(["at_abcdefghijk"])); // true: a cut-short echo
 * ```
 */
export function mentions(text: string, forms: readonly string[]): boolean {
  // any match, whole or cut short, holds the form's first MIN_SECRET_PREFIX characters (or all of a shorter one)
  return forms.some((form) => text.includes(form.slice(0, MIN_SECRET_PREFIX)));
}

/** How long a match of `form` in `text` at `at` is: its whole length, a start of at least MIN_SECRET_PREFIX characters, or 0. */
function matchAt(text: string, at: number, form: string): number {
  let n = 0;
  while (n < form.length && text[at + n] === form[n]) n++;
  return n === form.length || n >= MIN_SECRET_PREFIX ? n : 0;
}

/**
 * `text` with every one of `forms` replaced by {@link REDACTED}, whole or cut short (a start of at
 * least {@link MIN_SECRET_PREFIX} characters). At each place the longest match wins, so forms that
 * begin alike leave no tail.
 *
 * @example
 * ```ts
 * redactText("token=rt_%2Babcdefgh&x=1", formsOf(["rt_+abcdefghijk"])); // "token=[redacted]&x=1"
 * ```
 * @see RFC 9700 §4.3
 */
export function redactText(text: string, forms: readonly string[]): string {
  if (!mentions(text, forms)) return text;
  let out = "";
  let copied = 0;
  let at = 0;
  while (at < text.length) {
    let longest = 0;
    for (const form of forms) longest = Math.max(longest, matchAt(text, at, form));
    if (longest === 0) {
      at++;
      continue;
    }
    out += text.slice(copied, at) + REDACTED;
    at += longest;
    copied = at;
  }
  return out + text.slice(copied);
}

/**
 * `text` with each of `secrets`, in every form of {@link secretForms}, whole or cut short, replaced
 * by {@link REDACTED}; empty or absent secrets are skipped.
 *
 * @example
 * ```ts
 * scrub("bad token at_123", ["at_123"]); // "bad token [redacted]"
 * ```
 * @see RFC 9700 §4.3
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  return redactText(text, formsOf(secrets));
}

/** Error properties that live on the prototype for some errors (DOMException) and are read by name. */
const ERROR_FIELDS = ["name", "message", "stack", "code", "cause", "errors"] as const;

/**
 * Returns `value` itself when no form of any of `secrets` appears in it, else a copy with every
 * occurrence replaced, at every depth up to {@link MAX_DEPTH}. Errors are copied as `Error` (or
 * `AggregateError`) with their `name`, `message`, `stack`, `code`, `cause`, `errors` and own
 * properties, enumerable or not; arrays, maps, sets, `Headers` and plain objects keep their kind.
 *
 * @example
 * ```ts
 * redact(new Error("GET failed", { cause: new Error(`token ${t}`) }), [t]); // a copy, cause says "token [redacted]"
 * ```
 * @see RFC 6750 §5.1
 */
export function redact<T>(value: T, secrets: readonly (string | undefined)[]): T {
  const forms = formsOf(secrets);
  if (forms.length === 0) return value;
  const walk: Walk = { forms, copies: new Map(), changed: false };
  const copied = copy(value, walk, 0);
  return walk.changed ? (copied as T) : value;
}

/** One copy under way: the forms to remove, the copies made so far (cycles), and whether anything was removed. */
interface Walk {
  readonly forms: readonly string[];
  readonly copies: Map<object, unknown>;
  changed: boolean;
}

/** The named parts of an object, as [key, value] pairs; unreadable properties are skipped. */
function parts(value: object): [string, unknown][] {
  const keys = new Set<string>(Object.getOwnPropertyNames(value));
  if (value instanceof Error) for (const field of ERROR_FIELDS) keys.add(field);
  const out: [string, unknown][] = [];
  for (const key of keys) {
    if (Array.isArray(value) && key === "length") continue;
    try {
      out.push([key, (value as Record<string, unknown>)[key]]);
    } catch {
      // a throwing getter: nothing to read, nothing to leak
    }
  }
  return out;
}

/** A copy of `value` with the forms removed, noting in `walk` whether it differs from `value`. */
function copy(value: unknown, walk: Walk, depth: number): unknown {
  const { forms, copies } = walk;
  if (typeof value === "string") {
    const redacted = redactText(value, forms);
    if (redacted !== value) walk.changed = true;
    return redacted;
  }
  if (typeof value !== "object" || value === null) return value;
  if (depth > MAX_DEPTH) {
    walk.changed = true; // cannot be checked: dropped
    return TOO_DEEP;
  }
  const done = copies.get(value);
  if (done !== undefined) return done;
  const inner = (part: unknown): unknown => copy(part, walk, depth + 1);

  if (value instanceof Headers) {
    const out = new Headers();
    for (const [name, v] of value) out.append(name, inner(v) as string);
    return out;
  }
  if (value instanceof URLSearchParams) return new URLSearchParams(inner(value.toString()) as string);
  if (value instanceof Map) {
    const out = new Map();
    copies.set(value, out);
    for (const [k, v] of value) out.set(inner(k), inner(v));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set();
    copies.set(value, out);
    for (const v of value) out.add(inner(v));
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    copies.set(value, out);
    for (const v of value) out.push(inner(v));
    return out;
  }

  // Errors become plain Error / AggregateError copies: a copy with the original prototype could
  // break on getters that read internal slots (DOMException), and printing one must never throw.
  const out: object =
    value instanceof AggregateError ? new AggregateError([]) : value instanceof Error ? new Error() : {};
  copies.set(value, out);
  for (const [key, v] of parts(value)) {
    const own = Object.getOwnPropertyDescriptor(value, key);
    // an error field that the error does not have (no `code`, no `cause`)
    if (v === undefined && !own) continue;
    Object.defineProperty(out, inner(key) as string, {
      value: inner(v),
      enumerable: own?.enumerable ?? false,
      writable: true,
      configurable: true,
    });
  }
  return out;
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
 * secrets. Nothing else is copied but a string `code`, so request bodies, headers or responses
 * hanging on the original never reach the caller. An error met again further down (a cycle) is left
 * out there.
 *
 * @example
 * ```ts
 * throw new TransientError(undefined, 1, sanitize(fetchError, [refreshToken]));
 * ```
 * @see RFC 9700 §4.3
 */
export function sanitize(error: unknown, secrets: readonly (string | undefined)[]): Error {
  return sanitizeOnce(error, formsOf(secrets), new Set());
}

function sanitizeOnce(error: unknown, forms: readonly string[], seen: Set<unknown>): Error {
  seen.add(error);
  const e = (error ?? {}) as ErrorLike;
  const copyOf = (inner: unknown): Error[] => (seen.has(inner) ? [] : [sanitizeOnce(inner, forms, seen)]);
  const [cause] = e.cause === undefined ? [] : copyOf(e.cause);
  const message = redactText(String(e.message ?? error), forms);
  // `cause` (and `errors`) passed to the constructors stay non-enumerable, as on native errors.
  const options = (cause && { cause }) as ErrorOptions;
  const out = Array.isArray(e.errors)
    ? new AggregateError(e.errors.flatMap(copyOf), message, options)
    : new Error(message, options);
  out.name = redactText(String(e.name ?? "Error"), forms);
  // A stable error code (FileStorageError's FILE_CORRUPT, a system error's EROFS) lets callers branch
  // on the cause; other fields are not copied, since any of them could hold a secret.
  if (typeof e.code === "string") (out as Error & { code?: string }).code = redactText(e.code, forms);
  return out;
}
