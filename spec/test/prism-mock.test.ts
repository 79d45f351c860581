// Every operation of the contract, against a Prism mock of the bundle: once with a valid request
// (the documented status and a body matching its schema) and once with an invalid one (rejected,
// with the violations named). Prism is stopped afterwards, also when a test fails.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPrism, violations, type RunningPrism } from "./support/prism.js";
import { contract, schemaErrors } from "./support/schema.js";

const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"; // RFC 7636 Appendix B
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const json = { "Content-Type": "application/json", Accept: "application/json" };

let prism: RunningPrism;
beforeAll(async () => {
  prism = await startPrism();
});
afterAll(async () => {
  await prism?.stop();
});

const authorizeQuery = (overrides: Record<string, string> = {}) =>
  new URLSearchParams({
    response_type: "code",
    client_id: "demo",
    redirect_uri: "http://127.0.0.1:53682/callback",
    scope: "profile:read tickets:read",
    state: "5h2QmQd3yK0Zr2zJ7xX1pA",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    ...overrides,
  });

describe("GET /oauth/authorize", () => {
  it("accepts the seven parameters and shows the approval page", async () => {
    const res = await fetch(`${prism.url}/oauth/authorize?${authorizeQuery()}`, { redirect: "manual" });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
  });

  it("rejects code_challenge_method=plain and a short challenge, naming both", async () => {
    const res = await fetch(
      `${prism.url}/oauth/authorize?${authorizeQuery({ code_challenge_method: "plain", code_challenge: "short" })}`,
      { redirect: "manual" },
    );
    expect(res.status).toBe(400);
    const named = violations(res).map((v) => v.location.join("."));
    expect(named).toContain("request.query.code_challenge_method");
    expect(named).toContain("request.query.code_challenge");
  });

  it("rejects a scope name the service does not have, naming the scope parameter", async () => {
    const res = await fetch(`${prism.url}/oauth/authorize?${authorizeQuery({ scope: "profile:read profile:write" })}`, {
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(violations(res).map((v) => v.location.join("."))).toContain("request.query.scope");
  });

  it("rejects a request without state", async () => {
    const query = authorizeQuery();
    query.delete("state");
    const res = await fetch(`${prism.url}/oauth/authorize?${query}`, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(
      violations(res)
        .map((v) => v.message)
        .join("\n"),
    ).toMatch(/state/);
  });
});

describe("POST /oauth/token", () => {
  it("exchanges a code for the four token fields", async () => {
    const res = await fetch(`${prism.url}/oauth/token`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        grant_type: "authorization_code",
        client_id: "demo",
        redirect_uri: "http://127.0.0.1:53682/callback",
        code: "SplxlOBeZQQYbYS6WxSbIA",
        code_verifier: VERIFIER,
      }),
    });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(schemaErrors("#/components/schemas/TokenResponse", body)).toEqual([]);
  });

  it("refreshes with the refresh_token grant", async () => {
    const res = await fetch(`${prism.url}/oauth/token`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        grant_type: "refresh_token",
        refresh_token: "rt_tGzv3JOkF0XG5Qx2TlKWIA",
        client_id: "demo",
      }),
    });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
    expect(schemaErrors("#/components/schemas/RefreshTokenResponse", await res.json())).toEqual([]);
  });

  it("refreshes without client_id, which RFC 6749 §3.2.1 makes optional there", async () => {
    const res = await fetch(`${prism.url}/oauth/token`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ grant_type: "refresh_token", refresh_token: "rt_tGzv3JOkF0XG5Qx2TlKWIA" }),
    });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
  });

  it("serves a code exchange that matches the schema the contract names for that grant", async () => {
    const res = await fetch(`${prism.url}/oauth/token`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        grant_type: "authorization_code",
        client_id: "demo",
        redirect_uri: "http://127.0.0.1:53682/callback",
        code: "c",
        code_verifier: VERIFIER,
      }),
    });
    const byGrant = contract.paths["/oauth/token"].post.responses["200"]["x-response-schema-by-grant-type"];
    expect(schemaErrors(byGrant.authorization_code, await res.json())).toEqual([]);
    // The refresh shape alone would let a code exchange without refresh_token through; the named one does not.
    expect(
      schemaErrors(byGrant.authorization_code, { access_token: "a", token_type: "Bearer", expires_in: 900 }),
    ).toEqual(["(root) must have required property 'refresh_token'"]);
  });

  it("answers the form body of a general OAuth library with the contract's first example, invalid_request (not invalid_grant)", async () => {
    const res = await fetch(`${prism.url}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: "demo",
        redirect_uri: "http://127.0.0.1:53682/callback",
        code: "c",
        code_verifier: VERIFIER,
      }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
  });

  it("rejects a verifier shorter than 43 characters with an OAuth error body", async () => {
    const res = await fetch(`${prism.url}/oauth/token`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        grant_type: "authorization_code",
        client_id: "demo",
        redirect_uri: "http://127.0.0.1:53682/callback",
        code: "c",
        code_verifier: "x".repeat(42),
      }),
    });
    expect(res.status).toBe(400);
    expect(violations(res).map((v) => v.location.join("."))).toContain("request.body.code_verifier");
    expect(schemaErrors("#/components/schemas/OAuthError", await res.json())).toEqual([]);
  });
});

describe("POST /oauth/revoke", () => {
  it("revokes a token sent form-encoded (RFC 7009)", async () => {
    const res = await fetch(`${prism.url}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: "at_2YotnFZFEjr1zCsicMWpAA",
        token_type_hint: "access_token",
        client_id: "demo",
      }),
    });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
  });

  it("revokes without client_id (the contract admits it, though RFC 7009 §5 has a public client send it), and rejects an extra field that is not one string (it would encode as a repeated parameter)", async () => {
    const form = { "Content-Type": "application/x-www-form-urlencoded" };
    const ok = await fetch(`${prism.url}/oauth/revoke`, {
      method: "POST",
      headers: form,
      body: new URLSearchParams({ token: "at_2YotnFZFEjr1zCsicMWpAA" }),
    });
    expect(violations(ok)).toEqual([]);
    expect(ok.status).toBe(200);
    const repeated = await fetch(`${prism.url}/oauth/revoke`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ token: "at_x", extra: ["a", "b"] }),
    });
    expect(repeated.status).toBe(400);
    expect(violations(repeated).map((v) => v.location.join("."))).toContain("request.body.extra");
  });

  it("accepts a token_type_hint it does not know: 200 (RFC 7009 §2.1, §2.2; the hint is an open string)", async () => {
    const res = await fetch(`${prism.url}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: "at_2YotnFZFEjr1zCsicMWpAA", token_type_hint: "id_token", client_id: "demo" }),
    });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
  });

  it("rejects a request without the token", async () => {
    const res = await fetch(`${prism.url}/oauth/revoke`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ client_id: "demo" }),
    });
    expect(res.status).toBe(400);
    expect(
      violations(res)
        .map((v) => v.message)
        .join("\n"),
    ).toMatch(/token/);
  });
});

describe("GET /api/v1/auth/user", () => {
  it("returns an open user object for a bearer token", async () => {
    const res = await fetch(`${prism.url}/api/v1/auth/user`, {
      headers: { Authorization: "Bearer at_2YotnFZFEjr1zCsicMWpAA", Accept: "application/json" },
    });
    expect(violations(res)).toEqual([]);
    expect(res.status).toBe(200);
    expect(schemaErrors("#/components/schemas/User", await res.json())).toEqual([]);
  });

  it("answers 401 with a bearer challenge when the token is missing", async () => {
    const res = await fetch(`${prism.url}/api/v1/auth/user`, { headers: { Accept: "application/json" } });
    expect(res.status).toBe(401);
    expect(
      violations(res)
        .map((v) => v.message)
        .join("\n"),
    ).toMatch(/security/i);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
    // The contract's first example is the no-token challenge: no error code (RFC 6750 §3.1).
    expect(res.headers.get("www-authenticate")).not.toMatch(/error=/);
    expect(await res.json()).not.toHaveProperty("error");
  });
});
