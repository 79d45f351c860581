/**
 * What needs no server: bad options are refused at once with a typed error, before any connection
 * is checked out; and the error class has the shape every error of the kit has (name, stable code,
 * cause; no value).
 */
import { describe, expect, it, vi } from "vitest";
import { PostgresStorageError, postgresLock, postgresStorage } from "./index.js";

const TENANT = { baseUrl: "https://acme.tenant.test", clientId: "demo" };
const pool = (max?: number) => ({
  connect: vi.fn(async () => Promise.reject(new Error("never asked"))),
  options: { max },
});

describe("options", () => {
  it.each([
    [{ waitTimeoutMs: 0 }],
    [{ waitTimeoutMs: Number.NaN }],
    [{ waitSliceMs: -1 }],
    [{ commandTimeoutMs: Number.POSITIVE_INFINITY }],
    [{ maxLockConnections: 0 }],
    [{ maxLockConnections: 10 }],
    [{ maxLockConnections: 1.5 }],
    [{ keepalives: { idleSeconds: 0, intervalSeconds: 5, count: 3 } }],
    [{ keepalives: { idleSeconds: 10, intervalSeconds: 5, count: 0.5 } }],
    [{ table: "Tokens" }],
  ])("refuses %o with INVALID_OPTIONS before any connection", (options) => {
    const unused = pool(10);
    expect(() => postgresStorage(unused, { ...TENANT, ...options })).toThrow(
      expect.objectContaining({ name: "PostgresStorageError", code: "INVALID_OPTIONS" }),
    );
    if (!("table" in options)) expect(() => postgresLock(unused, options)).toThrow(PostgresStorageError);
    expect(unused.connect).not.toHaveBeenCalled();
  });

  it("refuses a pool of one connection: a refresh holds one for its lock and writes on another", () => {
    expect(() => postgresLock(pool(1))).toThrow(/a pool of 1 connection needs a max of at least 2/);
    expect(() => postgresStorage(pool(1), TENANT)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("refuses a storage without the token manager's baseUrl and clientId", () => {
    expect(() => postgresStorage(pool(10), {} as never)).toThrow(/baseUrl must be the token manager's baseUrl/);
    expect(() => postgresStorage(pool(10), { baseUrl: TENANT.baseUrl } as never)).toThrow(/clientId must be/);
  });

  it("accepts the defaults, and a pool that does not say its size (node-postgres's 10)", () => {
    expect(typeof postgresLock(pool(2))).toBe("function");
    const storage = postgresStorage({ connect: pool(10).connect }, TENANT);
    expect(storage.table).toBe("tenant_integration_records");
    expect(typeof storage.lock).toBe("function");
    expect(typeof storage.take).toBe("function");
    expect(typeof storage.setExpiring).toBe("function");
  });
});

describe("PostgresStorageError", () => {
  it("has a stable code, the class name, the code in its message, and its cause", () => {
    const cause = new Error("socket closed");
    const error = new PostgresStorageError("COMMAND_FAILED", "SELECT of the row failed", cause);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "PostgresStorageError", code: "COMMAND_FAILED", cause });
    expect(error.message).toBe("COMMAND_FAILED: SELECT of the row failed");
  });
});
