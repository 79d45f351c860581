import { describe, expect, it } from "vitest";
import {
  CLIENT_ID,
  getCode,
  getUser,
  OTHER_REDIRECT_URI,
  pkce,
  postJson,
  REDIRECT_URI,
  testSandbox,
} from "./helpers.js";

function exchange(sandbox: ReturnType<typeof testSandbox>, body: Record<string, unknown>): Promise<Response> {
  return postJson(sandbox, "/oauth/token", { grant_type: "authorization_code", ...body });
}

describe("POST /oauth/token, authorization_code grant", () => {
  it("issues an access token of 900 seconds, a refresh token, token_type Bearer, with Cache-Control: no-store", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 900, scope: "profile:read" });
    expect(body["access_token"]).toEqual(expect.any(String));
    expect(body["refresh_token"]).toEqual(expect.any(String));
    expect(body["access_token"]).not.toBe(body["refresh_token"]);
  });

  it("accepts a code only once, and a replay revokes the tokens issued from it", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const body = { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, code, code_verifier: verifier };
    const first = (await (await exchange(sandbox, body)).json()) as { access_token: string };
    expect((await getUser(sandbox, first.access_token)).status).toBe(200);
    const second = await exchange(sandbox, body);
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({ error: "invalid_grant" });
    expect((await getUser(sandbox, first.access_token)).status).toBe(401);
  });

  it("refuses a code presented 60 seconds after issue", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    sandbox.clock.advance(60);
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("accepts a code presented 59 seconds after issue", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    sandbox.clock.advance(59);
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(response.status).toBe(200);
  });

  it("refuses a verifier that does not match the challenge, and the code is then used up", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const wrong = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: pkce().verifier,
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });
    const right = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(right.status).toBe(400);
  });

  it("refuses a verifier that differs from the right one by its last character", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const changed = verifier.slice(0, -1) + (verifier.endsWith("A") ? "B" : "A");
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: changed,
    });
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a redirect_uri other than the one of the authorization request, even if registered", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: OTHER_REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a code presented by another registered client", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const response = await exchange(sandbox, {
      client_id: "limited",
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("answers an unknown client with invalid_client", async () => {
    const sandbox = testSandbox();
    const { code, verifier } = await getCode(sandbox);
    const response = await exchange(sandbox, {
      client_id: "nobody",
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });

  it.each([
    ["42 characters", "a".repeat(42)],
    ["129 characters", "a".repeat(129)],
    ["a character outside the unreserved set", `${"a".repeat(42)}+`],
  ])("answers a verifier of %s with invalid_request", async (_name, verifier) => {
    const sandbox = testSandbox();
    const { code } = await getCode(sandbox);
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_request" });
  });

  it("answers an unknown code with invalid_grant", async () => {
    const sandbox = testSandbox();
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code: "ac_made_up",
      code_verifier: pkce().verifier,
    });
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("verifies the verifier of RFC 7636 Appendix B", async () => {
    const sandbox = testSandbox();
    const query = new URLSearchParams({
      response_type: "code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      state: "s",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    });
    const redirect = await sandbox.app.request(`/oauth/authorize?${query.toString()}`);
    const code = new URL(redirect.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const response = await exchange(sandbox, {
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    });
    expect(response.status).toBe(200);
  });
});
