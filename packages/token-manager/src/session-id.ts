/**
 * The session id of a server acting for many users: the app's own id of its user or connection, the
 * rule every kit checks it by, and the one message text of its refusal (spec/token-store/README.md,
 * "The session id"). The same module as the Go kit's `sessionid.go`.
 *
 * @see RFC 3986 §2.3 (unreserved characters)
 */
import { fail } from "./errors.js";

/** The characters a session id may hold: RFC 3986 unreserved, plus `@ + = |`. */
const ALLOWED = /^[A-Za-z0-9\-._~@+=|]$/;
/** The longest session id, in characters (code points). */
const MAX_LENGTH = 128;
/** How many characters of a refused id its message shows. */
const SHOWN = 16;
const RULE = "a session id is 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (hash or encode any other id)";

/** One character as a refusal shows it: printable ASCII as it is, else (and `"`, `\`) `\u{X}`. */
function shown(c: string): string {
  const code = c.codePointAt(0) as number;
  return code < 0x21 || code > 0x7e || c === '"' || c === "\\" ? `\\u{${code.toString(16).toUpperCase()}}` : c;
}

/** Why `chars` is no session id; `undefined` when it is one. */
function reason(chars: readonly string[]): string | undefined {
  if (!chars.length) return "it is empty";
  const bad = chars.findIndex((c) => !ALLOWED.test(c));
  if (bad >= 0) return `"${shown(chars[bad] as string)}" at character ${bad + 1} is not allowed`;
  return chars.length > MAX_LENGTH ? `it is ${chars.length} characters long` : undefined;
}

/**
 * Checks a session id by the rule every kit shares: 1 to 128 characters from
 * `A-Z a-z 0-9 - . _ ~ @ + = |` (so UUIDs, integers, e-mail addresses and `auth0|123`-style subjects
 * fit). Kept out: `:` (it separates the parts of a storage name), `{` `}` (the Redis hash tag), `/`,
 * `%`, glob characters, spaces, control characters and anything beyond ASCII. Characters are code
 * points (`Array.from`), so an emoji counts as one.
 *
 * @returns the id, when it is one
 * @throws a `TokenManagerError` `INVALID_SESSION_ID` otherwise (also for a value that is not a
 * string), whose message names the rule and shows at most the id's first 16 characters, escaped
 * @example
 * ```ts
 * checkSessionId("auth0|64f1c2a9e1b7"); // "auth0|64f1c2a9e1b7"
 * checkSessionId("a:b"); // throws INVALID_SESSION_ID: invalid session id "a:b": ":" at character 2 is not allowed; …
 * ```
 * @see RFC 3986 §2.3
 */
export function checkSessionId(id: unknown): string {
  if (typeof id !== "string")
    return fail("INVALID_SESSION_ID", `invalid session id: a ${typeof id}, not a string; ${RULE}`);
  const chars = Array.from(id);
  const why = reason(chars);
  if (why === undefined) return id;
  const head = chars.slice(0, SHOWN).map(shown).join("") + (chars.length > SHOWN ? "..." : "");
  return fail("INVALID_SESSION_ID", `invalid session id "${head}": ${why}; ${RULE}`);
}
