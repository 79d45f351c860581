/**
 * The table's DDL without a server: for the default name it is exactly the shared
 * spec/token-store/postgres/schema.sql that every kit ships, its version is the one the storages
 * check, and table names are refused unless they mean the same quoted or not.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_TABLE, SCHEMA_VERSION, schemaSql } from "./index.js";

const spec = readFileSync(new URL("../../../spec/token-store/postgres/schema.sql", import.meta.url), "utf8");

describe("schemaSql", () => {
  it("is the shared schema.sql for the default table, version included", () => {
    expect(DEFAULT_TABLE).toBe("tenant_integration_records");
    expect(schemaSql()).toBe(spec);
    expect(spec).toContain(`COMMENT ON TABLE "tenant_integration_records" IS '${SCHEMA_VERSION}';`);
    expect(SCHEMA_VERSION).toBe("tenant-integration token store v1");
  });

  it("names the table, its index and its constraints after a table of the app's choosing, in its schema", () => {
    const sql = schemaSql({ table: "billing.oauth_tokens" });
    expect(sql).toContain('CREATE TABLE "billing"."oauth_tokens" (');
    expect(sql).toContain('CREATE INDEX "oauth_tokens_expires_at" ON "billing"."oauth_tokens" (expires_at)');
    expect(sql).toContain('CONSTRAINT "oauth_tokens_pkey" PRIMARY KEY (session, origin, client_id, kind)');
    expect(sql).not.toContain("tenant_integration_records");
  });

  it.each([["Tokens"], ["a.b.c"], ["1tokens"], ['to"kens'], ["to-kens"], [""], ["x".repeat(49)], ["public."]])(
    "refuses the table name %j: INVALID_OPTIONS",
    (table) => {
      expect(() => schemaSql({ table })).toThrow(
        expect.objectContaining({ name: "PostgresStorageError", code: "INVALID_OPTIONS" }),
      );
    },
  );
});
