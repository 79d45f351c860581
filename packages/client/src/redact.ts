/**
 * Internal: removing bearer tokens from whatever an error or an error value may carry: a fetch
 * error's `cause` chain, `AggregateError.errors`, non-enumerable properties, a response body.
 *
 * A token is looked for in every form the kit (or a fetch implementation echoing the request) may
 * have written it: as is, percent-encoded (upper- or lower-case hex), form-encoded and JSON-escaped.
 * Traversal is bounded: a cycle is copied once, and anything nested deeper than {@link MAX_DEPTH}
 * is replaced by a marker, because it cannot be checked.
 *
 * @see RFC 6750 §5.1 (tokens must not leak through logs or error reports)
 */

/** What replaces a token. */
export const REDACTED = "[redacted]";

/** How deep a value is searched; deeper parts are replaced by {@link TOO_DEEP}. */
export const MAX_DEPTH = 64;

/** What replaces a part nested deeper than {@link MAX_DEPTH}. */
export const TOO_DEEP = "[redacted: nested too deeply to check]";

/** Error properties that live on the prototype for some errors (DOMException) and are read by name. */
const ERROR_FIELDS = ["name", "message", "stack", "code", "cause", "errors"] as const;

/**
 * The forms in which `secret` may appear, longest first (so a form containing another is replaced
 * whole): raw, percent-encoded with upper- and lower-case hex, form-encoded (`URLSearchParams`), and
 * escaped inside a JSON string.
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

/** `text` with every form of the secrets replaced by {@link REDACTED}. */
export function redactText(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) out = out.split(form).join(REDACTED);
  return out;
}

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
 */
export function redact<T>(value: T, secrets: readonly (string | undefined)[]): T {
  const forms = [...new Set(secrets.filter((s): s is string => !!s).flatMap(secretForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0 || !mentions(value, forms, 0, new Set())) return value;
  return copy(value, forms, 0, new Map()) as T;
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

/** The entries of a collection whose content is not in own properties. */
function entries(value: object): unknown[] | undefined {
  if (value instanceof Map || value instanceof Headers || value instanceof URLSearchParams) return [...value.entries()];
  if (value instanceof Set) return [...value];
  return undefined;
}

function mentions(value: unknown, forms: readonly string[], depth: number, seen: Set<object>): boolean {
  if (typeof value === "string") return forms.some((form) => value.includes(form));
  if (typeof value !== "object" || value === null) return false;
  if (seen.has(value)) return false;
  if (depth > MAX_DEPTH) return true; // cannot be checked: treat as mentioning, so the copy drops it
  seen.add(value);
  const inner = entries(value) ?? parts(value).flat();
  return inner.some((part) => mentions(part, forms, depth + 1, seen));
}

function copy(value: unknown, forms: readonly string[], depth: number, copies: Map<object, unknown>): unknown {
  if (typeof value === "string") return redactText(value, forms);
  if (typeof value !== "object" || value === null) return value;
  if (depth > MAX_DEPTH) return TOO_DEEP;
  const done = copies.get(value);
  if (done !== undefined) return done;
  const inner = (part: unknown): unknown => copy(part, forms, depth + 1, copies);

  if (value instanceof Headers) {
    const out = new Headers();
    for (const [name, v] of value) out.append(name, inner(v) as string);
    return out;
  }
  if (value instanceof URLSearchParams) return new URLSearchParams(redactText(value.toString(), forms));
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
  const out: object = value instanceof AggregateError ? new AggregateError([]) : value instanceof Error ? new Error() : {};
  copies.set(value, out);
  for (const [key, v] of parts(value)) {
    if (v === undefined && !Object.prototype.hasOwnProperty.call(value, key)) continue;
    const own = Object.getOwnPropertyDescriptor(value, key);
    Object.defineProperty(out, inner(key) as string, {
      value: inner(v),
      enumerable: own?.enumerable ?? false,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
