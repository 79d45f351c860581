/**
 * Which row each of the token manager's names is, without a server: the shared vectors' rows
 * (spec/token-store/vectors/sessions.json, which every kit's tests read), names of another tenant or
 * client refused, and no two names of one client meeting in a row.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeRow, rowOf, scopeOf } from "./rows.js";

interface Row {
  origin: string;
  client_id: string;
  session: string;
  kind: string;
}
const vectors = JSON.parse(
  readFileSync(new URL("../../../spec/token-store/vectors/sessions.json", import.meta.url), "utf8"),
) as {
  scopes: {
    origin: string;
    clientId: string;
    names: Record<"tokens" | "intent" | "lock", string>;
    postgresRows: Record<"tokens" | "intent", Row>;
  }[];
  pending: { origin: string; clientId: string; name: string; postgresRow: Row }[];
};

/** A row as the vectors write it: the table's column names. */
const columns = ({ origin, clientId, session, kind }: ReturnType<typeof rowOf>): Row => ({
  origin,
  client_id: clientId,
  session,
  kind,
});

describe("rowOf", () => {
  it("gives every record of the shared vectors its row", () => {
    for (const v of vectors.scopes) {
      const scope = scopeOf(v.origin, v.clientId);
      expect(columns(rowOf(scope, v.names.tokens))).toEqual(v.postgresRows.tokens);
      expect(columns(rowOf(scope, v.names.intent))).toEqual(v.postgresRows.intent);
    }
    for (const v of vectors.pending)
      expect(columns(rowOf(scopeOf(v.origin, v.clientId), v.name))).toEqual(v.postgresRow);
  });

  it("splits a client id that holds a colon where the manager's own baseUrl and clientId say", () => {
    const scope = scopeOf("https://acme.tenant.test/", "urn:app:1");
    expect(rowOf(scope, "tenant-integration:https://acme.tenant.test:urn:app:1:ada@example.org:tokens")).toEqual({
      origin: "https://acme.tenant.test",
      clientId: "urn:app:1",
      session: "ada@example.org",
      kind: "tokens",
    });
    expect(rowOf(scope, "tenant-integration:https://acme.tenant.test:urn:app:1:tokens").session).toBe("");
  });

  it("keeps the one pending sign-in of kits before issue 39 in a row of its own", () => {
    const scope = scopeOf("https://acme.tenant.test", "demo");
    expect(rowOf(scope, "tenant-integration:https://acme.tenant.test:demo:pending")).toMatchObject({
      session: "",
      kind: "pending",
    });
    // The session named "pending" is a session like any other.
    expect(rowOf(scope, "tenant-integration:https://acme.tenant.test:demo:pending:tokens")).toMatchObject({
      session: "pending",
      kind: "tokens",
    });
  });

  it.each([
    ["another tenant", "tenant-integration:https://other.tenant.test:demo:tokens"],
    ["another client", "tenant-integration:https://acme.tenant.test:demo2:tokens"],
    ["a port the manager's baseUrl does not have", "tenant-integration:https://acme.tenant.test:8443:demo:tokens"],
    ["a lock (no row: an advisory lock)", "tenant-integration:https://acme.tenant.test:demo:lock"],
    ["a session's lock", "tenant-integration:https://acme.tenant.test:demo:42:lock"],
    ["a session id outside the rule", "tenant-integration:https://acme.tenant.test:demo:a b:tokens"],
    ["an empty session id", "tenant-integration:https://acme.tenant.test:demo::tokens"],
    ["a pending key that is not 32 hex digits", "tenant-integration:https://acme.tenant.test:demo:pending:ABC"],
    [
      "a session's pending sign-in (pending sign-ins belong to no session)",
      "tenant-integration:https://acme.tenant.test:demo:42:pending",
    ],
    ["a name of the app's own", "my-app:settings"],
  ])("refuses %s with UNKNOWN_NAME", (_, name) => {
    expect(() => rowOf(scopeOf("https://acme.tenant.test", "demo"), name)).toThrow(
      expect.objectContaining({ name: "PostgresStorageError", code: "UNKNOWN_NAME" }),
    );
  });

  it("never gives two names one row", () => {
    const scope = scopeOf("https://acme.tenant.test", "demo");
    const tails = [
      "tokens",
      "intent",
      "pending",
      `pending:${"a".repeat(32)}`,
      "pending:tokens",
      "42:tokens",
      "42:intent",
      `${"a".repeat(32)}:tokens`,
    ];
    const rows = tails.map((tail) => JSON.stringify(rowOf(scope, `${scope.prefix}${tail}`)));
    expect(new Set(rows).size).toBe(tails.length);
  });
});

describe("scopeOf", () => {
  it("takes the origin of the manager's baseUrl, as the manager does", () => {
    expect(scopeOf("https://Acme.Tenant.test:443/some/path", "demo").prefix).toBe(
      "tenant-integration:https://acme.tenant.test:demo:",
    );
    expect(scopeOf("http://127.0.0.1:4010", "cli").origin).toBe("http://127.0.0.1:4010");
  });

  it.each([
    [undefined, "demo"],
    ["acme.tenant.test", "demo"],
    ["ftp://acme.tenant.test", "demo"],
    ["https://acme.tenant.test", ""],
  ])("refuses baseUrl %j with clientId %j: INVALID_OPTIONS", (baseUrl, clientId) => {
    expect(() => scopeOf(baseUrl, clientId)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });
});

describe("describeRow", () => {
  it("names the row as a condition a user can paste into a query, quotes doubled, never the value", () => {
    const row = rowOf(
      scopeOf("https://acme.tenant.test", "o'brien"),
      "tenant-integration:https://acme.tenant.test:o'brien:42:tokens",
    );
    expect(describeRow("billing.oauth_tokens", row)).toBe(
      "billing.oauth_tokens (origin, client_id, session, kind) = ('https://acme.tenant.test', 'o''brien', '42', 'tokens')",
    );
  });
});
