/**
 * The row of each of the token manager's names (spec/token-store/README.md, "PostgreSQL"): the
 * storage is made for one tenant origin and client id, so it splits a name after their prefix into a
 * session id and a kind without guessing where a client id holding `:` ends.
 */
import { PostgresStorageError } from "./errors.js";

/** The key of a row: the table's primary key, in the spec's order of the name's parts. */
export interface RowKey {
  readonly origin: string;
  readonly clientId: string;
  /** The session id, `""` for the session of a manager without one (and for pending sign-ins). */
  readonly session: string;
  /** `tokens`, `intent`, `pending:<32 hex>`, or the `pending` of kits before issue 39. */
  readonly kind: string;
}

/** The tenant and client a storage is made for: the token manager's `baseUrl` origin and `clientId`. */
export interface Scope {
  readonly origin: string;
  readonly clientId: string;
  /** `tenant-integration:<origin>:<clientId>:`, what every name of theirs starts with. */
  readonly prefix: string;
}

/** The session id rule of every kit (spec/token-store/README.md, "The session id"). */
const SESSION_ID = /^[A-Za-z0-9\-._~@+=|]{1,128}$/;
/** A pending sign-in's tail: `pending:` and the first 32 lowercase hex digits of SHA-256(state). */
const PENDING = /^pending:[0-9a-f]{32}$/;
/** The kinds of a scope without a session: the records, and the one pending sign-in of kits before issue 39. */
const KINDS_WITHOUT_SESSION = new Set(["tokens", "intent", "pending"]);
/** The kinds of a session's scope. */
const KINDS_OF_SESSION = new Set(["tokens", "intent"]);

/**
 * The scope of a storage made for `baseUrl` (its origin, as the token manager takes it: scheme,
 * host and a port other than the default) and `clientId`.
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS` for a `baseUrl` that is not an http(s) URL,
 * or an empty `clientId`.
 */
export function scopeOf(baseUrl: unknown, clientId: unknown): Scope {
  let origin: string | undefined;
  try {
    const url = new URL(String(baseUrl));
    if (url.protocol === "https:" || url.protocol === "http:") origin = url.origin;
  } catch {
    // Reported below.
  }
  if (typeof baseUrl !== "string" || origin === undefined) {
    throw new PostgresStorageError(
      "INVALID_OPTIONS",
      "baseUrl must be the token manager's baseUrl, an http(s) URL of the tenant (https://<tenant_host>)",
    );
  }
  if (typeof clientId !== "string" || clientId === "") {
    throw new PostgresStorageError(
      "INVALID_OPTIONS",
      "clientId must be the token manager's clientId, a non-empty string",
    );
  }
  return { origin, clientId, prefix: `tenant-integration:${origin}:${clientId}:` };
}

/**
 * The row of the manager's `name`: after the scope's prefix, `<kind>` (no session), `<session>:<kind>`
 * (a session), or `pending:<key>` (a pending sign-in, which belongs to no session).
 *
 * @throws {@link PostgresStorageError} `UNKNOWN_NAME` for a name of another tenant or client (the
 * storage was made for another `baseUrl` or `clientId` than the manager's), or one that is no record
 * of the token manager's.
 * @example
 * ```ts
 * rowOf(scopeOf("https://acme.tenant.test", "demo"), "tenant-integration:https://acme.tenant.test:demo:42:tokens");
 * // { origin: "https://acme.tenant.test", clientId: "demo", session: "42", kind: "tokens" }
 * ```
 */
export function rowOf(scope: Scope, name: string): RowKey {
  const { origin, clientId, prefix } = scope;
  if (!name.startsWith(prefix)) {
    throw new PostgresStorageError(
      "UNKNOWN_NAME",
      `${JSON.stringify(name)} is not a record of ${origin} and client ${JSON.stringify(clientId)}, the tenant and client this storage was made for: give postgresStorage the token manager's own baseUrl and clientId`,
    );
  }
  const tail = name.slice(prefix.length);
  const last = tail.lastIndexOf(":");
  if (PENDING.test(tail)) return { origin, clientId, session: "", kind: tail };
  if (last === -1 && KINDS_WITHOUT_SESSION.has(tail)) return { origin, clientId, session: "", kind: tail };
  const session = tail.slice(0, last);
  const kind = tail.slice(last + 1);
  if (last > 0 && SESSION_ID.test(session) && KINDS_OF_SESSION.has(kind)) return { origin, clientId, session, kind };
  throw new PostgresStorageError(
    "UNKNOWN_NAME",
    `${JSON.stringify(name)} is not a record of the token manager's (tokens, intent or a pending sign-in, of ${origin} and client ${JSON.stringify(clientId)})`,
  );
}

/** A string as a SQL literal, for messages a user can paste into a query: `'it''s'`. */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * Where a user finds a row: the table and its key as a condition to paste into a query, e.g.
 * `tenant_integration_records (origin, client_id, session, kind) = ('https://acme.tenant.test', 'demo', '42', 'tokens')`.
 * Never the value.
 */
export function describeRow(table: string, row: RowKey): string {
  const key = [row.origin, row.clientId, row.session, row.kind].map(literal).join(", ");
  return `${table} (origin, client_id, session, kind) = (${key})`;
}
