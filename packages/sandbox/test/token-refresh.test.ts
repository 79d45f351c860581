import { describe, expect, it } from "vitest";
import { CLIENT_ID, getUser, postJson, refresh, signIn, testSandbox, type TokenBody } from "./helpers.js";

describe("POST /oauth/token, refresh_token grant", () => {
  it("rotates the refresh token on every refresh and issues a new access token", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const response = await refresh(sandbox, first.refresh_token);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const second = (await response.json()) as TokenBody;
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.expires_in).toBe(900);
    expect((await getUser(sandbox, second.access_token)).status).toBe(200);
    const third = (await (await refresh(sandbox, second.refresh_token)).json()) as TokenBody;
    expect(third.refresh_token).not.toBe(second.refresh_token);
  });

  it("works after the access token expired", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    sandbox.clock.advance(901);
    expect((await getUser(sandbox, first.access_token)).status).toBe(401);
    const second = (await (await refresh(sandbox, first.refresh_token)).json()) as TokenBody;
    expect((await getUser(sandbox, second.access_token)).status).toBe(200);
  });

  it("revokes the whole family when a rotated refresh token is presented again", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const second = (await (await refresh(sandbox, first.refresh_token)).json()) as TokenBody;
    const reuse = await refresh(sandbox, first.refresh_token);
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
    expect((await getUser(sandbox, first.access_token)).status).toBe(401);
    expect((await getUser(sandbox, second.access_token)).status).toBe(401);
    const afterReuse = await refresh(sandbox, second.refresh_token);
    expect(await afterReuse.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("leaves other families alone when one family is revoked for reuse", async () => {
    const sandbox = testSandbox();
    const victim = await signIn(sandbox);
    const bystander = await signIn(sandbox);
    await refresh(sandbox, victim.refresh_token);
    await refresh(sandbox, victim.refresh_token);
    expect((await getUser(sandbox, bystander.access_token)).status).toBe(200);
    expect((await refresh(sandbox, bystander.refresh_token)).status).toBe(200);
  });

  it("refuses a refresh token 30 days after its issue", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    sandbox.clock.advance(30 * 24 * 60 * 60);
    const response = await refresh(sandbox, first.refresh_token);
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("counts the 30 days of a rotated refresh token from its own issue", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    sandbox.clock.advance(29 * 24 * 60 * 60);
    const second = (await (await refresh(sandbox, first.refresh_token)).json()) as TokenBody;
    sandbox.clock.advance(29 * 24 * 60 * 60);
    expect((await refresh(sandbox, second.refresh_token)).status).toBe(200);
  });

  it("refreshes without client_id, the refresh token naming its client (RFC 6749 §3.2.1 makes client_id optional)", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const response = await postJson(sandbox, "/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: first.refresh_token,
    });
    expect(response.status).toBe(200);
    const second = (await response.json()) as TokenBody;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await getUser(sandbox, second.access_token)).status).toBe(200);
  });

  it("refuses a refresh without client_id when the client the token names is no longer registered, and logs that client", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const without = { grant_type: "refresh_token", refresh_token: first.refresh_token };
    const ok = await postJson(sandbox, "/oauth/token", without);
    expect(ok.status).toBe(200);
    expect(sandbox.events().at(-1)).toMatchObject({ grantType: "refresh_token", clientId: CLIENT_ID, outcome: "ok" });
    const second = (await ok.json()) as TokenBody;
    sandbox.clients.unregister(CLIENT_ID);
    const refused = await postJson(sandbox, "/oauth/token", { ...without, refresh_token: second.refresh_token });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_client" });
  });

  it("answers a refresh without client_id and with an unknown refresh token with 400 invalid_grant", async () => {
    const sandbox = testSandbox();
    const response = await postJson(sandbox, "/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: "rt_never_issued",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a refresh token presented by another client", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const response = await refresh(sandbox, first.refresh_token, { client_id: "limited" });
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
    expect((await refresh(sandbox, first.refresh_token)).status).toBe(200);
  });

  it("narrows the access token to a requested scope within the grant", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox, { scope: "profile:read tickets:read" });
    const narrowed = (await (
      await refresh(sandbox, first.refresh_token, { scope: "tickets:read" })
    ).json()) as TokenBody;
    expect(narrowed.scope).toBe("tickets:read");
    expect((await getUser(sandbox, narrowed.access_token)).status).toBe(403);
    const widened = (await (await refresh(sandbox, narrowed.refresh_token)).json()) as TokenBody;
    expect(widened.scope).toBe("profile:read tickets:read");
  });

  it("answers a scope beyond the grant with invalid_scope", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const response = await refresh(sandbox, first.refresh_token, { scope: "profile:read tickets:write" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_scope" });
  });

  it("answers an unknown refresh token with invalid_grant", async () => {
    const sandbox = testSandbox();
    const response = await refresh(sandbox, "rt_unknown");
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses an access token presented as a refresh token", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    expect(await (await refresh(sandbox, first.access_token)).json()).toMatchObject({ error: "invalid_grant" });
  });
});
