/**
 * End to end over real HTTP on loopback: the token manager and the client against a running
 * sandbox, with the sign-in redirect followed programmatically (auto-approve).
 */
import { createTenantClient, ForbiddenError } from "@tenant-integration/client";
import {
  createTokenManager,
  memoryStorage,
  OAuthResponseError,
  SessionEndedError,
  type TokenManager,
} from "@tenant-integration/token-manager";
import type { Scope } from "@tenant-integration/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_USER, startSandbox, type RunningSandbox } from "../src/index.js";
import { contractProblems } from "./support/contract.js";

const CLIENT = "e2e";
const REDIRECT = "http://127.0.0.1:53682/callback";
const OTHER_REDIRECT = "http://127.0.0.1:53682/other-callback";

let running: RunningSandbox;

beforeAll(async () => {
  running = await startSandbox({
    clients: [{ id: CLIENT, redirectUris: [REDIRECT, OTHER_REDIRECT] }],
    autoApprove: true,
    testClock: true,
  });
});

afterAll(async () => {
  await running.close();
});

interface Exchange {
  readonly path: string;
  readonly requestBody: string;
  readonly response: Response;
}

/** A token manager on the sandbox's clock, whose token-endpoint traffic the test can read. */
function setup(options: { scopes?: readonly Scope[]; sharedClock?: boolean } = {}) {
  const exchanges: Exchange[] = [];
  const manager: TokenManager = createTokenManager({
    baseUrl: running.url,
    clientId: CLIENT,
    redirectUri: REDIRECT,
    scopes: options.scopes ?? ["profile:read"],
    storage: memoryStorage(),
    ...(options.sharedClock === false ? {} : { now: () => running.sandbox.clock.now() }),
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      // The manager calls fetch with a URL string and an init.
      const body = init?.body;
      exchanges.push({
        path: new URL(String(input)).pathname,
        requestBody: typeof body === "string" ? body : String(body ?? ""),
        response: response.clone(),
      });
      return response;
    },
  });
  const client = createTenantClient({ baseUrl: running.url, auth: manager });
  return { manager, client, exchanges };
}

/** Follows the authorize URL without a browser: the sandbox auto-approves and answers 302. */
async function follow(url: string): Promise<string> {
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status).toBe(302);
  expect(await contractProblems("/oauth/authorize", "GET", response)).toEqual([]);
  return response.headers.get("location") ?? "";
}

async function signIn(manager: TokenManager): Promise<void> {
  const { url } = await manager.beginAuthorization();
  await manager.completeAuthorization(await follow(url));
}

async function tokenBodies(exchanges: Exchange[]): Promise<Array<Record<string, unknown>>> {
  return Promise.all(
    exchanges
      .filter((e) => e.path === "/oauth/token")
      .map(async (e) => (await e.response.clone().json()) as Record<string, unknown>),
  );
}

const refreshEvents = () => running.sandbox.events().filter((event) => event.grantType === "refresh_token");

describe("token manager + client + sandbox over loopback", () => {
  it("signs in through the authorize redirect and reads the user", async () => {
    const { manager, client } = setup();
    await signIn(manager);
    const { data, error, response } = await client.GET("/api/v1/auth/user");
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data).toEqual(DEMO_USER);
  });

  it("refreshes transparently with rotation once the clock passes 15 minutes, and again after another 15", async () => {
    const { manager, client, exchanges } = setup();
    await signIn(manager);
    running.sandbox.clearEvents();
    await running.sandbox.clock.advance(15 * 60 + 1);
    const first = await client.GET("/api/v1/auth/user");
    expect(first.response.status).toBe(200);
    expect(refreshEvents().map((event) => event.outcome)).toEqual(["ok"]);
    const [issued, rotated] = await tokenBodies(exchanges);
    expect(rotated?.["refresh_token"]).toEqual(expect.any(String));
    expect(rotated?.["refresh_token"]).not.toBe(issued?.["refresh_token"]);
    // A second refresh only succeeds if the manager stored the rotated refresh token.
    running.sandbox.clock.advance(15 * 60 + 1);
    expect((await client.GET("/api/v1/auth/user")).response.status).toBe(200);
    expect(refreshEvents().map((event) => event.outcome)).toEqual(["ok", "ok"]);
  });

  it("refreshes after a 401 when the manager's clock does not know the token expired", async () => {
    const { manager, client } = setup({ sharedClock: false });
    await signIn(manager);
    running.sandbox.clearEvents();
    running.sandbox.clock.advance(15 * 60 + 1);
    const { response, data } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(data).toEqual(DEMO_USER);
    expect(refreshEvents().map((event) => event.outcome)).toEqual(["ok"]);
  });

  it("rejects the old refresh token when reused and revokes the whole family", async () => {
    const { manager, client, exchanges } = setup();
    await signIn(manager);
    running.sandbox.clock.advance(15 * 60 + 1);
    expect((await client.GET("/api/v1/auth/user")).response.status).toBe(200);
    const [issued, rotated] = await tokenBodies(exchanges);
    const reuse = await fetch(`${running.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        grant_type: "refresh_token",
        client_id: CLIENT,
        refresh_token: issued?.["refresh_token"],
      }),
    });
    expect(reuse.status).toBe(400);
    expect(await contractProblems("/oauth/token", "POST", reuse)).toEqual([]);
    expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
    expect(running.sandbox.events().at(-1)).toMatchObject({
      grantType: "refresh_token",
      outcome: "invalid_grant",
      detail: "refresh_token_reused",
    });
    // The rotated tokens belong to the revoked family too.
    const user = await fetch(`${running.url}/api/v1/auth/user`, {
      headers: { authorization: `Bearer ${String(rotated?.["access_token"])}` },
    });
    expect(user.status).toBe(401);
    await expect(client.GET("/api/v1/auth/user")).rejects.toBeInstanceOf(SessionEndedError);
  });

  it("revokes, after which the old access token is answered 401", async () => {
    const { manager, client, exchanges } = setup();
    await signIn(manager);
    expect((await client.GET("/api/v1/auth/user")).response.status).toBe(200);
    const [issued] = await tokenBodies(exchanges);
    await manager.revoke();
    const revokeCall = exchanges.find((e) => e.path === "/oauth/revoke");
    expect(revokeCall?.response.status).toBe(200);
    const response = await fetch(`${running.url}/api/v1/auth/user`, {
      headers: { authorization: `Bearer ${String(issued?.["access_token"])}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(await contractProblems("/api/v1/auth/user", "GET", response)).toEqual([]);
  });

  it("answers a session without profile:read with 403 naming the scope", async () => {
    const { manager, client } = setup({ scopes: ["tickets:read"] });
    await signIn(manager);
    const { error, response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(403);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).requiredScope).toEqual(["profile:read"]);
  });

  it("refuses a wrong verifier with invalid_grant", async () => {
    const { manager, exchanges } = setup();
    const { url } = await manager.beginAuthorization();
    const tampered = new URL(url);
    tampered.searchParams.set("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    const error = await manager.completeAuthorization(await follow(tampered.toString())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect(error).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await contractProblems("/oauth/token", "POST", exchanges.at(-1)?.response as Response)).toEqual([]);
    expect(running.sandbox.events().at(-1)).toMatchObject({ detail: "verifier_mismatch" });
  });

  it("refuses a reused code with invalid_grant, and revokes what the code issued", async () => {
    const { manager, client, exchanges } = setup();
    await signIn(manager);
    const exchange = exchanges.find((e) => e.path === "/oauth/token");
    const replay = await fetch(`${running.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: exchange?.requestBody ?? "",
    });
    expect(replay.status).toBe(400);
    expect(await contractProblems("/oauth/token", "POST", replay)).toEqual([]);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    await expect(client.GET("/api/v1/auth/user")).rejects.toBeInstanceOf(SessionEndedError);
  });

  it("refuses a redirect_uri that differs from the authorization request with invalid_grant", async () => {
    const { manager, exchanges } = setup();
    const { url } = await manager.beginAuthorization();
    const tampered = new URL(url);
    tampered.searchParams.set("redirect_uri", OTHER_REDIRECT);
    const location = new URL(await follow(tampered.toString()));
    expect(`${location.origin}${location.pathname}`).toBe(OTHER_REDIRECT);
    const callback = `${REDIRECT}${location.search}`;
    const error = await manager.completeAuthorization(callback).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await contractProblems("/oauth/token", "POST", exchanges.at(-1)?.response as Response)).toEqual([]);
    expect(running.sandbox.events().at(-1)).toMatchObject({ detail: "redirect_uri_mismatch" });
  });
});
