/**
 * `sandbox.fetch` is shaped like the global `fetch`, so it plugs into the token manager's and the
 * client's `fetch` options with no adapter (type tests, checked by `tsc --strict` in `pnpm typecheck`),
 * and it answers every form of call `fetch` takes, plus the servers' (Request, their own argument).
 */
import { createTenantClient, staticToken, type TenantClientOptions } from "@tenant-integration/client";
import { createTokenManager, type TokenManagerOptions } from "@tenant-integration/token-manager";
import { describe, expect, expectTypeOf, it } from "vitest";
import { createSandbox, type FetchLike } from "../src/index.js";

const BASE = "http://127.0.0.1:4020";

describe("sandbox.fetch", () => {
  it("fits the token manager's and the client's fetch options under strict, as typeof fetch does", () => {
    const sandbox = createSandbox();
    expectTypeOf(sandbox.fetch).toExtend<NonNullable<TokenManagerOptions["fetch"]>>();
    expectTypeOf(sandbox.fetch).toExtend<NonNullable<TenantClientOptions["fetch"]>>();
    expectTypeOf(fetch).toExtend<FetchLike>();
    expectTypeOf(sandbox.fetch).toExtend<typeof fetch>();
    // The same objects as a user writes them: no cast, no wrapper.
    const tm = createTokenManager({
      baseUrl: BASE,
      clientId: "c",
      redirectUri: `${BASE}/cb`,
      scopes: ["profile:read"],
      fetch: sandbox.fetch,
    });
    const client = createTenantClient({ baseUrl: BASE, auth: tm, fetch: sandbox.fetch });
    expect(client.baseUrl).toBe(BASE);
  });

  it("answers a URL string with an init, a URL object, a Request, and a Request whose init overrides it", async () => {
    const sandbox = createSandbox();
    const health = `${BASE}/__sandbox/health`;
    expect((await sandbox.fetch(health)).status).toBe(200);
    expect((await sandbox.fetch(new URL(health))).status).toBe(200);
    expect((await sandbox.fetch(new Request(health))).status).toBe(200);
    expect((await sandbox.fetch(health, { method: "DELETE" })).status).toBe(404);
    // fetch(request, init): the init's method wins, as with the global fetch.
    const revoke = new Request(`${BASE}/oauth/revoke`, { method: "POST" });
    expect((await sandbox.fetch(revoke, { method: "GET" })).status).toBe(405);
  });

  it("passes a server's own second argument (Bun's server, Deno's info, node-server's bindings) to the app, not as a RequestInit", async () => {
    const sandbox = createSandbox();
    const request = new Request(`${BASE}/__sandbox/health`);
    const answer = await sandbox.fetch(request, { remoteAddr: { hostname: "127.0.0.1" } } as unknown as RequestInit);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ status: "ok" });
  });

  it("is a promise-returning function, always", () => {
    const sandbox = createSandbox();
    expect(sandbox.fetch(`${BASE}/__sandbox/health`)).toBeInstanceOf(Promise);
  });

  it("drives the client end to end with a static token the sandbox issued", async () => {
    const sandbox = createSandbox({ clients: [{ id: "c", redirectUris: [`${BASE}/cb`] }] });
    const { accessToken } = sandbox.issueTokens("c", ["profile:read"]);
    const client = createTenantClient({ baseUrl: BASE, auth: staticToken(accessToken), fetch: sandbox.fetch });
    expect((await client.GET("/api/v1/auth/user")).response.status).toBe(200);
  });
});
