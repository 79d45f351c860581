import { describe, expect, it } from "vitest";
import { CLIENT_ID, getUser, postForm, postJson, refresh, signIn, testSandbox } from "./helpers.js";

describe("test routes", () => {
  it.each([
    ["POST", "/__sandbox/clock"],
    ["GET", "/__sandbox/clock"],
    ["GET", "/__sandbox/events"],
    ["DELETE", "/__sandbox/events"],
    ["GET", "/__sandbox/requests"],
  ])("%s %s does not exist without the test clock (404)", async (method, path) => {
    const sandbox = testSandbox({ testClock: false });
    const response = await sandbox.app.request(path, {
      method,
      headers: { "content-type": "application/json" },
      ...(method === "POST" ? { body: '{"advanceSeconds":1000}' } : {}),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: "not_found" });
  });

  it("POST /__sandbox/clock moves time forward and returns the new time", async () => {
    const sandbox = testSandbox({ now: () => Date.parse("2030-01-01T00:00:00Z") });
    const response = await postJson(sandbox, "/__sandbox/clock", { advanceSeconds: 901 });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      now: "2030-01-01T00:15:01.000Z",
      epochMs: Date.parse("2030-01-01T00:15:01Z"),
      offsetSeconds: 901,
    });
    expect(await (await sandbox.app.request("/__sandbox/clock")).json()).toMatchObject({ offsetSeconds: 901 });
  });

  it("expires an access token after the clock moves 15 minutes", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await postJson(sandbox, "/__sandbox/clock", { advanceSeconds: 900 });
    const response = await sandbox.app.request("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(response.status).toBe(401);
  });

  it.each([
    ["a negative advance", { advanceSeconds: -1 }],
    ["a string", { advanceSeconds: "900" }],
    ["a missing field", {}],
    ["more than ten years", { advanceSeconds: 1e12 }],
  ])("answers %s with 400", async (_name, body) => {
    const sandbox = testSandbox();
    const response = await postJson(sandbox, "/__sandbox/clock", body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_request" });
    expect(sandbox.clock.offsetSeconds).toBe(0);
  });

  it("GET /__sandbox/events logs token and revoke calls with grant type, outcome and client, never token values", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await refresh(sandbox, tokens.refresh_token);
    await refresh(sandbox, tokens.refresh_token);
    await postJson(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: CLIENT_ID });
    const response = await sandbox.app.request("/__sandbox/events");
    const text = await response.text();
    expect(text).not.toContain(tokens.access_token);
    expect(text).not.toContain(tokens.refresh_token);
    const { events } = JSON.parse(text) as { events: Array<Record<string, unknown>> };
    expect(
      events.map(({ endpoint, grantType, outcome, detail, clientId, status }) => ({
        endpoint,
        grantType,
        outcome,
        detail,
        clientId,
        status,
      })),
    ).toEqual([
      {
        endpoint: "token",
        grantType: "authorization_code",
        outcome: "ok",
        detail: null,
        clientId: CLIENT_ID,
        status: 200,
      },
      { endpoint: "token", grantType: "refresh_token", outcome: "ok", detail: null, clientId: CLIENT_ID, status: 200 },
      {
        endpoint: "token",
        grantType: "refresh_token",
        outcome: "invalid_grant",
        detail: "refresh_token_reused",
        clientId: CLIENT_ID,
        status: 400,
      },
      {
        endpoint: "revoke",
        grantType: null,
        outcome: "ok",
        detail: "already_revoked",
        clientId: CLIENT_ID,
        status: 200,
      },
    ]);
    expect(events[0]?.["time"]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(sandbox.events()).toHaveLength(4);
  });

  it("DELETE /__sandbox/events clears the log", async () => {
    const sandbox = testSandbox();
    await signIn(sandbox);
    expect(await (await sandbox.app.request("/__sandbox/events", { method: "DELETE" })).json()).toEqual({ cleared: 1 });
    expect(await (await sandbox.app.request("/__sandbox/events")).json()).toEqual({ events: [] });
  });

  it("the programmatic clock and event log work without the test routes", async () => {
    const sandbox = testSandbox({ testClock: false });
    const tokens = await signIn(sandbox);
    sandbox.clock.advance(900);
    expect(
      (await sandbox.app.request("/api/v1/auth/user", { headers: { authorization: `Bearer ${tokens.access_token}` } }))
        .status,
    ).toBe(401);
    expect(sandbox.events()).toHaveLength(1);
    expect(sandbox.clearEvents()).toBe(1);
  });

  it("GET /__sandbox/requests shows the headers each token, revocation and API request carried, never a token", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    await getUser(sandbox, tokens.access_token);
    await sandbox.app.request("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${tokens.access_token}`, "sandbox-actor": "a1" },
    });
    await postForm(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: CLIENT_ID });
    const text = await (await sandbox.app.request("/__sandbox/requests")).text();
    expect(text).not.toContain(tokens.access_token);
    const { requests } = JSON.parse(text) as { requests: Array<Record<string, unknown>> };
    // The authorization page and the test routes are not recorded: only what a kit calls.
    expect(requests.map(({ method, path, actor, headers }) => ({ method, path, actor, headers }))).toEqual([
      {
        method: "POST",
        path: "/oauth/token",
        actor: null,
        headers: { accept: "application/json", "content-type": "application/json" },
      },
      {
        method: "GET",
        path: "/api/v1/auth/user",
        actor: null,
        headers: { accept: "application/json", authorization: "Bearer" },
      },
      {
        method: "GET",
        path: "/api/v1/auth/user",
        actor: "a1",
        headers: { authorization: "Bearer", "sandbox-actor": "a1" },
      },
      {
        method: "POST",
        path: "/oauth/revoke",
        actor: null,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      },
    ]);
    expect(requests.map((request) => request["seq"])).toEqual([1, 2, 3, 4]);
    expect(await (await sandbox.app.request("/__sandbox/requests", { method: "DELETE" })).json()).toEqual({
      cleared: 4,
    });
    expect(await (await sandbox.app.request("/__sandbox/requests")).json()).toEqual({ requests: [] });
  });
});
