import { describe, expect, it } from "vitest";
import { CLIENT_ID, postJson, REDIRECT_URI, testSandbox } from "./helpers.js";

const sandbox = testSandbox();

async function tokenWith(
  body: string,
  contentType = "application/json",
): Promise<{ status: number; body: Record<string, unknown>; cacheControl: string | null }> {
  const response = await sandbox.app.request("/oauth/token", {
    method: "POST",
    headers: { "content-type": contentType },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    cacheControl: response.headers.get("cache-control"),
  };
}

describe("malformed requests to POST /oauth/token get 400 with an RFC 6749 §5.2 body", () => {
  const valid = {
    grant_type: "authorization_code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code: "x",
    code_verifier: "a".repeat(43),
  };

  it.each([
    [
      "a form body (the contract takes JSON)",
      "grant_type=refresh_token&refresh_token=x&client_id=demo",
      "application/x-www-form-urlencoded",
      "invalid_request",
    ],
    ["text/plain", JSON.stringify(valid), "text/plain", "invalid_request"],
    ["no content type", JSON.stringify(valid), "", "invalid_request"],
    ["JSON that does not parse", '{"grant_type":', "application/json", "invalid_request"],
    ["an empty body", "", "application/json", "invalid_request"],
    ["a JSON array", "[]", "application/json", "invalid_request"],
    ["JSON null", "null", "application/json", "invalid_request"],
    ["a JSON string", '"grant_type"', "application/json", "invalid_request"],
    ["a missing grant_type", JSON.stringify({ client_id: CLIENT_ID }), "application/json", "invalid_request"],
    ["a numeric grant_type", JSON.stringify({ grant_type: 1 }), "application/json", "invalid_request"],
    [
      "an unknown grant_type",
      JSON.stringify({ grant_type: "password", client_id: CLIENT_ID }),
      "application/json",
      "unsupported_grant_type",
    ],
    [
      "client_credentials",
      JSON.stringify({ grant_type: "client_credentials" }),
      "application/json",
      "unsupported_grant_type",
    ],
    ["a missing code", JSON.stringify({ ...valid, code: undefined }), "application/json", "invalid_request"],
    ["an object as code", JSON.stringify({ ...valid, code: { $ne: null } }), "application/json", "invalid_request"],
    ["null as redirect_uri", JSON.stringify({ ...valid, redirect_uri: null }), "application/json", "invalid_request"],
    [
      "an array as client_id",
      JSON.stringify({ ...valid, client_id: [CLIENT_ID] }),
      "application/json",
      "invalid_request",
    ],
    [
      "a refresh without refresh_token",
      JSON.stringify({ grant_type: "refresh_token", client_id: CLIENT_ID }),
      "application/json",
      "invalid_request",
    ],
    [
      "a refresh with a numeric scope",
      JSON.stringify({ grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: "x", scope: 3 }),
      "application/json",
      "invalid_request",
    ],
    [
      "a refresh with a malformed scope",
      JSON.stringify({ grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: "x", scope: " a" }),
      "application/json",
      "invalid_scope",
    ],
  ])("%s → %s", async (_name, body, contentType, error) => {
    const result = await tokenWith(body, contentType);
    expect(result.status).toBe(400);
    expect(result.body["error"]).toBe(error);
    expect(result.body["error_description"]).toEqual(expect.any(String));
    expect(result.cacheControl).toBe("no-store");
  });

  it("ignores unknown fields (RFC 6749 §3.2)", async () => {
    const result = await tokenWith(JSON.stringify({ ...valid, extra: { deep: [1, 2] } }));
    expect(result.body["error"]).toBe("invalid_grant");
  });

  it("answers a body over 64 KiB with 400 invalid_request", async () => {
    const result = await tokenWith(JSON.stringify({ ...valid, padding: "x".repeat(70_000) }));
    expect(result.status).toBe(400);
    expect(result.body["error"]).toBe("invalid_request");
  });

  it("keeps error_description within the characters RFC 6749 §5.2 allows even when it echoes input", async () => {
    const response = await sandbox.app.request("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    const body = (await response.json()) as { error_description: string };
    expect(body.error_description).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]*$/);
    const scoped = await postJson(sandbox, "/oauth/token", {
      grant_type: "refresh_token",
      client_id: CLIENT_ID,
      refresh_token: "x",
      scope: 'a"é\\',
    });
    expect(((await scoped.json()) as { error_description: string }).error_description).toMatch(
      /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/,
    );
  });
});

describe("routes and methods", () => {
  it("answers an unknown route with a JSON 404", async () => {
    const response = await sandbox.app.request("/api/v1/contacts");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: "not_found" });
  });

  it.each([
    ["GET", "/oauth/token", "POST"],
    ["PUT", "/oauth/revoke", "POST"],
    ["POST", "/oauth/authorize", "GET"],
    ["DELETE", "/api/v1/auth/user", "GET"],
  ])("answers %s %s with 405 and Allow: %s", async (method, path, allow) => {
    const response = await sandbox.app.request(path, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe(allow);
  });

  it("answers the health route", async () => {
    expect(await (await sandbox.app.request("/__sandbox/health")).json()).toEqual({ status: "ok" });
  });
});
