import { describe, expect, it } from "vitest";
import { CLIENT_ID, getUser, postForm, postJson, refresh, signIn, testSandbox, type TokenBody } from "./helpers.js";

describe("POST /oauth/revoke", () => {
  it("revokes the access token given as a form, answers 200 with no body, and the user call becomes 401", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const response = await postForm(sandbox, "/oauth/revoke", {
      token: tokens.access_token,
      token_type_hint: "access_token",
      client_id: CLIENT_ID,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
    expect((await getUser(sandbox, tokens.access_token)).status).toBe(401);
  });

  it("disconnects the integration: the refresh token of the grant stops working too", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    expect(
      (await postJson(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: CLIENT_ID })).status,
    ).toBe(200);
    expect(await (await refresh(sandbox, tokens.refresh_token)).json()).toMatchObject({ error: "invalid_grant" });
  });

  it("revoking a refresh token revokes every access token of its family", async () => {
    const sandbox = testSandbox();
    const first = await signIn(sandbox);
    const second = (await (await refresh(sandbox, first.refresh_token)).json()) as TokenBody;
    await postJson(sandbox, "/oauth/revoke", {
      token: second.refresh_token,
      token_type_hint: "refresh_token",
      client_id: CLIENT_ID,
    });
    expect((await getUser(sandbox, first.access_token)).status).toBe(401);
    expect((await getUser(sandbox, second.access_token)).status).toBe(401);
  });

  it("answers 200 for an unknown token and for one already revoked", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    expect((await postJson(sandbox, "/oauth/revoke", { token: "at_unknown", client_id: CLIENT_ID })).status).toBe(200);
    await postJson(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: CLIENT_ID });
    expect(
      (await postJson(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: CLIENT_ID })).status,
    ).toBe(200);
  });

  it("does not let one client revoke another client's token", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    expect(
      (await postJson(sandbox, "/oauth/revoke", { token: tokens.access_token, client_id: "limited" })).status,
    ).toBe(200);
    expect((await getUser(sandbox, tokens.access_token)).status).toBe(200);
  });

  it("revokes without client_id, the token naming its client (the contract admits it; RFC 7009 §5 has a public client send it)", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const response = await postForm(sandbox, "/oauth/revoke", {
      token: tokens.access_token,
      token_type_hint: "access_token",
    });
    expect(response.status).toBe(200);
    expect((await getUser(sandbox, tokens.access_token)).status).toBe(401);
    expect((await postJson(sandbox, "/oauth/revoke", { token: "at_never_issued" })).status).toBe(200);
  });

  it("ignores a token_type_hint it does not know: 200, and the token is revoked (RFC 7009 §2.1, §2.2)", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const response = await postJson(sandbox, "/oauth/revoke", {
      token: tokens.access_token,
      token_type_hint: "id_token",
      client_id: CLIENT_ID,
    });
    expect(response.status).toBe(200);
    expect((await getUser(sandbox, tokens.access_token)).status).toBe(401);
  });

  it("still answers a client_id given as a number with 400 invalid_request", async () => {
    const sandbox = testSandbox();
    const response = await postJson(sandbox, "/oauth/revoke", { token: "x", client_id: 5 });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_request" });
  });

  it.each([
    ["a missing token", { client_id: CLIENT_ID }, "invalid_request"],
    ["a token that is a number", { token: 5, client_id: CLIENT_ID }, "invalid_request"],
    [
      "a token_type_hint that is not a string",
      { token: "x", client_id: CLIENT_ID, token_type_hint: ["access_token"] },
      "invalid_request",
    ],
    [
      "an extra field that is an object (found by Schemathesis: every field is one string)",
      { token: "x", client_id: CLIENT_ID, extra: {} },
      "invalid_request",
    ],
    [
      "an extra field that is an array (a repeated form parameter)",
      { token: "x", client_id: CLIENT_ID, extra: ["a", "b"] },
      "invalid_request",
    ],
    ["an unknown client", { token: "x", client_id: "nobody" }, "invalid_client"],
  ])("answers %s with 400 %s", async (_name, body, error) => {
    const sandbox = testSandbox();
    const response = await postJson(sandbox, "/oauth/revoke", body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error });
  });

  it("answers a text/plain body with 400 invalid_request", async () => {
    const sandbox = testSandbox();
    const response = await sandbox.app.request("/oauth/revoke", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "token=x",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_request" });
  });
});
