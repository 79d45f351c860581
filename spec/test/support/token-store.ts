// The rules of spec/token-store/README.md ("Sessions") written out once, for the spec's own tests: the
// test vectors (token-store/vectors/sessions.json) must be what these compute, and the README's
// example tables what the vectors hold. The kits implement the same rules in their own code and read
// the vectors; nothing here is imported by a kit.
import { createHash } from "node:crypto";

/** The characters a session id may hold: RFC 3986 unreserved, plus `@ + = |`. */
const SESSION_CHARACTER = /^[A-Za-z0-9\-._~@+=|]$/;
/** The longest session id, in characters. */
export const MAX_SESSION_ID_LENGTH = 128;
/** The end of every `INVALID_SESSION_ID` message: the rule. */
export const SESSION_ID_RULE =
  "a session id is 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (hash or encode any other id)";
/** How many characters of a bad id a message shows. */
const SHOWN = 16;

/** The three kinds of record names every scope has. */
export const KINDS = ["tokens", "intent", "lock"] as const;
export type Kind = (typeof KINDS)[number];

/** One character as a message shows it: `!`..`~` as is, except `"` and `\`; anything else `\u{X}`. */
function shown(character: string): string {
  const point = character.codePointAt(0) ?? 0;
  return point >= 0x21 && point <= 0x7e && character !== '"' && character !== "\\"
    ? character
    : `\\u{${point.toString(16).toUpperCase()}}`;
}

/**
 * The `INVALID_SESSION_ID` message for `id` (without the `INVALID_SESSION_ID: ` the kits' errors put
 * first), or undefined for a valid id. Characters are Unicode code points.
 */
export function sessionIdProblem(id: string): string | undefined {
  const characters = Array.from(id);
  const bad = characters.findIndex((c) => !SESSION_CHARACTER.test(c));
  let reason: string;
  if (characters.length === 0) reason = "it is empty";
  else if (bad !== -1) reason = `"${shown(characters[bad] ?? "")}" at character ${bad + 1} is not allowed`;
  else if (characters.length > MAX_SESSION_ID_LENGTH) reason = `it is ${characters.length} characters long`;
  else return undefined;
  const head = characters.slice(0, SHOWN).map(shown).join("") + (characters.length > SHOWN ? "..." : "");
  return `invalid session id "${head}": ${reason}; ${SESSION_ID_RULE}`;
}

const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** `<origin>:<clientId>`, or `<origin>:<clientId>:<session>` with a session id. */
export const scopeOf = (origin: string, clientId: string, session: string | null): string =>
  session === null ? `${origin}:${clientId}` : `${origin}:${clientId}:${session}`;

/** The manager's name of a record of a scope. */
export const nameOf = (scope: string, kind: Kind | "pending"): string => `tenant-integration:${scope}:${kind}`;

/** The pending key of a state: the first 32 lowercase hex digits of SHA-256(state). */
export const pendingKey = (state: string): string => sha256Hex(state).slice(0, 32);

/** The manager's name of a pending sign-in. */
export const pendingName = (origin: string, clientId: string, state: string): string =>
  `tenant-integration:${origin}:${clientId}:pending:${pendingKey(state)}`;

const PENDING_NAME = /^tenant-integration:(.+):pending:([0-9a-f]{32})$/;
const SCOPE_NAME = /^tenant-integration:(.+):(tokens|pending|intent|lock)$/;

/** The Redis key of a manager's name: the scope (or, for a pending sign-in, origin and client) in a hash tag. */
export function redisKey(prefix: string, name: string): string {
  const pending = PENDING_NAME.exec(name);
  if (pending) return `${prefix}tenant-integration:{${pending[1]}}:pending:${pending[2]}`;
  const scoped = SCOPE_NAME.exec(name);
  return scoped ? `${prefix}tenant-integration:{${scoped[1]}}:${scoped[2]}` : prefix + name;
}

/** A record's row in the PostgreSQL table: its key columns. */
export interface PostgresRow {
  origin: string;
  client_id: string;
  session: string;
  kind: string;
}

/**
 * The PostgreSQL row of a manager's `name`, for a storage made for `origin` and `clientId`: after
 * their prefix, `pending:<key>` (no session), `<kind>` (no session) or `<session>:<kind>`; `undefined`
 * for a name of another client, or no record's (a lock, which is no row).
 */
export function postgresRow(origin: string, clientId: string, name: string): PostgresRow | undefined {
  const prefix = `tenant-integration:${origin}:${clientId}:`;
  if (!name.startsWith(prefix)) return undefined;
  const tail = name.slice(prefix.length);
  const row = (session: string, kind: string) => ({ origin, client_id: clientId, session, kind });
  if (/^pending:[0-9a-f]{32}$/.test(tail)) return row("", tail);
  if (tail === "tokens" || tail === "intent") return row("", tail);
  const [, session, kind] = /^(.+):(tokens|intent)$/.exec(tail) ?? [];
  return session !== undefined && sessionIdProblem(session) === undefined ? row(session, kind!) : undefined;
}

/** The lock directories of a scope beside a token file: the refresh lock per session, one write lock per file. */
export function fileLocks(file: string, scope: string, session: string | null): { refresh: string; write: string } {
  const refresh =
    session === null ? `${file}.refresh.lock` : `${file}.${sha256Hex(nameOf(scope, "lock")).slice(0, 16)}.refresh.lock`;
  return { refresh, write: `${file}.write.lock` };
}

/** What a pending record's `browser` holds for a binding: SHA-256 of its UTF-8 bytes, lowercase hex. */
export const browserOf = (binding: string): string => sha256Hex(binding);

/**
 * The refusal rule at the callback: `accept`, or `STATE_MISMATCH` when exactly one side has a
 * binding (an empty one counts as none) or the hashes differ.
 */
export function bindingOutcome(recordBrowser: string | null, binding: string | null): "accept" | "STATE_MISMATCH" {
  const given = binding === null || binding === "" ? null : binding;
  if (recordBrowser === null && given === null) return "accept";
  if (recordBrowser === null || given === null) return "STATE_MISMATCH";
  return browserOf(given) === recordBrowser ? "accept" : "STATE_MISMATCH";
}

/** A binding cookie's value counts only when it has the form of 32 bytes in base64url: 43 characters, no padding. */
export const isBindingCookieValue = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

/** The binding cookie a start handler sets for a redirect URI and a pending lifetime. */
export function bindingCookie(
  redirectUri: string,
  pendingLifetimeMs: number,
): { name: string; path: string; maxAge: number; httpOnly: true; secure: boolean; sameSite: "Lax" } {
  const secure = new URL(redirectUri).protocol === "https:";
  return {
    name: secure ? "__Host-tenant-signin" : "tenant-signin",
    path: "/",
    maxAge: Math.ceil(pendingLifetimeMs / 1000),
    httpOnly: true,
    secure,
    sameSite: "Lax",
  };
}

/** A pending record's JSON text as every kit writes it: that key order, no spaces, absent fields left out. */
export function pendingRecordText(record: {
  state: string;
  verifier: string;
  expiresAt: number;
  sessionId?: string;
  browser?: string;
}): string {
  const { state, verifier, expiresAt, sessionId, browser } = record;
  return JSON.stringify({ state, verifier, expiresAt, sessionId, browser });
}

/** CRC16-CCITT (XMODEM), as Redis Cluster hashes keys. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * The Redis Cluster hash slot of a key: CRC16 of its hash tag (the text between the first `{` and the
 * next `}`, when not empty) or of the whole key, modulo 16384.
 *
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export function hashSlot(key: string): number {
  const open = key.indexOf("{");
  const close = open === -1 ? -1 : key.indexOf("}", open + 1);
  const tag = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(new TextEncoder().encode(tag)) % 16384;
}
