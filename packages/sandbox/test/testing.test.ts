/**
 * `@tenant-integration/sandbox/testing`: `createTestTenant` gives a signed-in token manager and a
 * client on an in-process sandbox and one shared clock, so the tests a user writes about sessions
 * ("refreshes after 16 minutes", "403 without the scope", "revoked, then signed out") take a few lines.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { logSessionTo, TokenManagerError, type Logger } from "@tenant-integration/token-manager";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ACCESS_TOKEN_LIFETIME_SECONDS, DEMO_USER, DEMO_USERS } from "../src/index.js";
import { createTestTenant, TestTenantError } from "../src/testing.js";

const refreshes = (events: { grantType: string | null; outcome: string }[]) =>
  events.filter((e) => e.grantType === "refresh_token");

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("createTestTenant", () => {
  it("signs in with the chosen scopes, headlessly, and the client calls the API with the manager's token", async () => {
    const tenant = await createTestTenant({ scopes: ["profile:read"] });
    const { data, response } = await tenant.client.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(data).toEqual(DEMO_USER);
    expect(tenant.events().map((e) => `${e.endpoint} ${e.grantType}: ${e.outcome}`)).toEqual([
      "token authorization_code: ok",
    ]);
    expect(tenant.baseUrl).toBe("http://127.0.0.1:4020");
    expect(tenant.client.baseUrl).toBe(tenant.baseUrl);
  });

  it("refreshes after 16 minutes: the one shared clock expires the access token for the sandbox and the manager alike", async () => {
    const tenant = await createTestTenant();
    const first = await tenant.tokenManager.getAccessToken();
    tenant.advance(16 * 60);
    // The old token is dead on the sandbox's side too: the same clock moved.
    const stale = await tenant.sandbox.fetch(`${tenant.baseUrl}/api/v1/auth/user`, {
      headers: { Authorization: `Bearer ${first}` },
    });
    expect(stale.status).toBe(401);
    const { response } = await tenant.client.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(refreshes(tenant.events()).map((e) => e.outcome)).toEqual(["ok"]);
    expect(await tenant.tokenManager.getAccessToken()).not.toBe(first);
  });

  it("refreshes proactively, before expiry, within the manager's leeway", async () => {
    const tenant = await createTestTenant({ tokenManager: { refreshLeewayMs: 120_000 } });
    tenant.advance(ACCESS_TOKEN_LIFETIME_SECONDS - 119);
    expect(refreshes(tenant.events())).toEqual([]);
    await tenant.client.GET("/api/v1/auth/user");
    expect(refreshes(tenant.events()).map((e) => e.outcome)).toEqual(["ok"]);
  });

  it("answers 403 without the scope the route requires", async () => {
    const tenant = await createTestTenant({ scopes: ["tickets:read"] });
    const { error, response } = await tenant.client.GET("/api/v1/auth/user");
    expect(response.status).toBe(403);
    expect(error).toBeDefined();
    expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });

  it("is signed out after revoke: the sandbox refuses the old token and the manager has none, until signIn()", async () => {
    const tenant = await createTestTenant();
    const token = await tenant.tokenManager.getAccessToken();
    await tenant.tokenManager.revoke();
    expect(tenant.events().at(-1)).toMatchObject({ endpoint: "revoke", outcome: "ok" });
    const refused = await tenant.sandbox.fetch(`${tenant.baseUrl}/api/v1/auth/user`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(refused.status).toBe(401);
    await expect(tenant.tokenManager.getAccessToken()).rejects.toMatchObject({ code: "NOT_SIGNED_IN" });
    await expect(tenant.client.GET("/api/v1/auth/user")).rejects.toBeInstanceOf(TokenManagerError);
    await tenant.signIn();
    expect((await tenant.client.GET("/api/v1/auth/user")).response.status).toBe(200);
  });

  it("works with the tenant's real https address as baseUrl (the Host check accepts it, nothing leaves the process)", async () => {
    const tenant = await createTestTenant({ baseUrl: "https://acme.tenant.test" });
    const { data, response } = await tenant.client.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: expect.any(String) });
  });

  it("leaves the manager signed out with signIn: false", async () => {
    const tenant = await createTestTenant({ signIn: false });
    await expect(tenant.tokenManager.getAccessToken()).rejects.toMatchObject({ code: "NOT_SIGNED_IN" });
    expect(tenant.events()).toEqual([]);
    // The shared clock runs on real time: the receive time lies between these two readings.
    const before = tenant.sandbox.clock.now();
    const session = await tenant.signIn();
    const after = tenant.sandbox.clock.now();
    expect(session.scope).toBe("profile:read");
    expect(session.expiresAt).toBeGreaterThanOrEqual(before + ACCESS_TOKEN_LIFETIME_SECONDS * 1000);
    expect(session.expiresAt).toBeLessThanOrEqual(after + ACCESS_TOKEN_LIFETIME_SECONDS * 1000);
  });

  it("throws TestTenantError SIGN_IN_FAILED, saying why, when the sandbox does not approve", async () => {
    // The token manager refuses a scope the contract does not list before any request, so the
    // sandbox is made to refuse the authorization request with a fault.
    const failure = await createTestTenant({
      sandbox: { faults: [{ route: "/oauth/authorize", kind: "status", status: 503 }] },
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TestTenantError);
    expect(failure).toMatchObject({ name: "TestTenantError", code: "SIGN_IN_FAILED" });
    expect((failure as Error).message).toMatch(
      /^The sandbox did not approve the sign-in \(HTTP 503\): .*temporarily_unavailable/,
    );
  });

  it("stays in-process: the global fetch is never called", async () => {
    const global = vi.fn(() => Promise.reject(new Error("network used")));
    vi.stubGlobal("fetch", global);
    const tenant = await createTestTenant();
    tenant.advance(16 * 60);
    expect((await tenant.client.GET("/api/v1/auth/user")).response.status).toBe(200);
    await tenant.tokenManager.revoke();
    expect(global).not.toHaveBeenCalled();
  });

  it("keeps tenants apart: each has its own clock, tokens and events", async () => {
    const a = await createTestTenant();
    const b = await createTestTenant();
    a.advance(16 * 60);
    await a.client.GET("/api/v1/auth/user");
    await b.client.GET("/api/v1/auth/user");
    expect(refreshes(a.events())).toHaveLength(1);
    expect(refreshes(b.events())).toHaveLength(0);
    expect(b.sandbox.clock.offsetSeconds).toBe(0);
  });

  it("signs in as the user it is told, and signs in again as another", async () => {
    const tenant = await createTestTenant({ user: 43 });
    expect((await tenant.client.GET("/api/v1/auth/user")).data).toEqual(DEMO_USERS[1]);
    await tenant.tokenManager.signOut();
    await tenant.signIn({ user: 44 });
    expect((await tenant.client.GET("/api/v1/auth/user")).data).toEqual(DEMO_USERS[2]);
    await tenant.signIn();
    expect((await tenant.client.GET("/api/v1/auth/user")).data).toEqual(DEMO_USERS[1]);
    expect(tenant.events().map((e) => e.user)).toEqual([43, 44, 43]);
  });

  it("throws TestTenantError naming a user the sandbox does not have", async () => {
    await expect(createTestTenant({ user: "nobody" })).rejects.toThrow(
      "The sandbox did not approve the sign-in (HTTP 302): sandbox_user names no user of this sandbox (its users: 42, 43, 44).",
    );
  });

  it("passes options through: the manager's logger, the sandbox's users, the client's headers", async () => {
    const lines: string[] = [];
    const logger: Logger = { info: (_fields, message) => void lines.push(message) };
    const tenant = await createTestTenant({
      sandbox: { users: [{ id: "u-7" }] },
      tokenManager: { logger: logSessionTo(logger) },
      client: { headers: { "X-Test": "1" } },
      now: () => Date.UTC(2030, 0, 1),
    });
    expect((await tenant.client.GET("/api/v1/auth/user")).data).toEqual({ id: "u-7" });
    expect(lines).toContain("Signed in");
    expect(tenant.sandbox.clock.now()).toBe(Date.UTC(2030, 0, 1));
  });
});

describe("the package's entry points", () => {
  const src = fileURLToPath(new URL("../src/", import.meta.url));

  /** Every bare import of the modules reachable from `entry` by relative imports. */
  function bareImports(entry: string): Set<string> {
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
        if (spec!.startsWith(".")) visit(join(dirname(file), spec!.replace(/\.js$/, ".ts")));
        else bare.add(spec!);
      }
    };
    visit(join(src, entry));
    return bare;
  }

  it("keeps the main entry free of the client and the token manager; only ./testing imports them", () => {
    const main = [...bareImports("index.ts")];
    expect(main.filter((s) => /client|token-manager/.test(s))).toEqual([]);
    expect(main).toContain("hono");
    const testing = bareImports("testing.ts");
    expect(testing).toContain("@tenant-integration/client");
    expect(testing).toContain("@tenant-integration/token-manager");
  });
});
