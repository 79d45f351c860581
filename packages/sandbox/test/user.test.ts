import { describe, expect, it } from "vitest";
import { DEMO_USER } from "../src/index.js";
import { CLIENT_ID, getUser, signIn, testSandbox } from "./helpers.js";

describe("GET /api/v1/auth/user", () => {
  it("returns the demo user for a token with profile:read", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const response = await getUser(sandbox, tokens.access_token);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(DEMO_USER);
  });

  it("returns the configured user record", async () => {
    const sandbox = testSandbox({ users: [{ id: "u-1", name: "Grace" }] });
    const tokens = await signIn(sandbox);
    expect(await (await getUser(sandbox, tokens.access_token)).json()).toEqual({ id: "u-1", name: "Grace" });
  });

  it("accepts the scheme name in any case", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const response = await sandbox.app.request("/api/v1/auth/user", {
      headers: { authorization: `bEARER ${tokens.access_token}` },
    });
    expect(response.status).toBe(200);
  });

  it("answers a request with no credentials with 401 and a bearer challenge without an error code (RFC 6750 §3.1)", async () => {
    const response = await testSandbox().app.request("/api/v1/auth/user");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="tenant-sandbox"');
  });

  it.each([
    ["a Basic header", "Basic ZGVtbzpkZW1v"],
    ["a bearer header with no token", "Bearer "],
    ["a token with a character outside b64token", 'Bearer at_a"b'],
    ["two tokens", "Bearer a b"],
    ["an unknown token", "Bearer at_unknown"],
  ])("answers %s with 401 and a WWW-Authenticate invalid_token challenge", async (_name, header) => {
    const sandbox = testSandbox();
    const response = await sandbox.app.request("/api/v1/auth/user", { headers: { authorization: header } });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
    expect(await response.json()).toMatchObject({ error: "invalid_token" });
  });

  it("answers a token 15 minutes after issue with 401, and one second before with 200", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    sandbox.clock.advance(899);
    expect((await getUser(sandbox, tokens.access_token)).status).toBe(200);
    sandbox.clock.advance(1);
    const response = await getUser(sandbox, tokens.access_token);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("answers a token without profile:read with 403 and an insufficient_scope challenge naming profile:read", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox, { scope: "tickets:read" });
    const response = await getUser(sandbox, tokens.access_token);
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer realm="tenant-sandbox", error="insufficient_scope", scope="profile:read"',
    );
    expect(await response.json()).toMatchObject({ error: "insufficient_scope", scope: "profile:read" });
  });

  it("issueTokens gives a token of the chosen scope without the flow", async () => {
    const sandbox = testSandbox();
    const tokens = sandbox.issueTokens(CLIENT_ID, ["contacts:read"]);
    expect((await getUser(sandbox, tokens.accessToken)).status).toBe(403);
    expect(() => sandbox.issueTokens("nobody")).toThrow(/not registered/);
  });
});
