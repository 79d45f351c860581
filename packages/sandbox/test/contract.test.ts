/**
 * The sandbox behind `prism proxy --errors`: Prism checks every request and response against the
 * contract and turns a violation into a 500 problem+json with an `sl-violations` header. Redirects
 * are checked directly against the sandbox, because Prism follows an upstream 302 itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../src/index.js";
import { contractProblems, schemaForGrant, schemaProblems } from "./support/contract.js";
import { startPrismProxy, type RunningPrism } from "./support/prism.js";
import { authorizeQuery, CLIENT_ID, pkce, REDIRECT_URI, type TokenBody } from "./helpers.js";

let sandbox: RunningSandbox | undefined;
let prism: RunningPrism | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({ clients: [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], testClock: true });
  prism = await startPrismProxy(sandbox.url);
});

afterAll(async () => {
  await prism?.stop();
  await sandbox?.close();
});

/** Sends a request through Prism and asserts it reports no violation. */
async function viaProxy(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(`${prism?.url ?? ""}${path}`, { redirect: "manual", ...init });
  const violations = response.headers.get("sl-violations");
  const type = response.headers.get("content-type") ?? "";
  if (violations !== null || type.includes("problem+json")) {
    throw new Error(`Prism reported a violation (${response.status}): ${violations ?? (await response.text())}`);
  }
  return response;
}

/** Sends a request straight to the sandbox (for redirects) and checks the response with the contract. */
async function direct(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${sandbox?.url ?? ""}${path}`, { redirect: "manual", ...init });
}

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(body),
});

describe("the sandbox against its contract (Prism proxy --errors)", () => {
  let verifier = "";
  let code = "";
  let tokens: TokenBody | undefined;

  it("serves the consent page (200 HTML) through the proxy", async () => {
    const pair = pkce();
    verifier = pair.verifier;
    const response = await viaProxy(authorizeQuery({ state: "contract-state" }, pair.challenge));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const requestId = /name="request_id" value="([^"]+)"/.exec(await response.text())?.[1] ?? "";

    const approved = await direct("/__sandbox/consent", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ request_id: requestId, decision: "approve" }).toString(),
    });
    expect(approved.status).toBe(302);
    expect(await contractProblems("/oauth/authorize", "GET", approved)).toEqual([]);
    const location = new URL(approved.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get("state")).toBe("contract-state");
    code = location.searchParams.get("code") ?? "";
    expect(code).not.toBe("");
  });

  it("shows an unknown client as a 400 page through the proxy", async () => {
    const response = await viaProxy(authorizeQuery({ client_id: "unknown-client" }));
    expect(response.status).toBe(400);
  });

  it("redirects authorization errors (302, Location valid) directly", async () => {
    for (const overrides of [{ scope: "nope:read" }, { code_challenge_method: "plain" }, { response_type: "token" }]) {
      const response = await direct(authorizeQuery(overrides));
      expect(response.status).toBe(302);
      expect(await contractProblems("/oauth/authorize", "GET", response)).toEqual([]);
      expect(new URL(response.headers.get("location") ?? "").searchParams.get("error")).toMatch(
        /^(invalid_scope|invalid_request|unsupported_response_type)$/,
      );
    }
  });

  it("refuses a wrong verifier, an unknown code and a mismatched redirect_uri with 400 invalid_grant through the proxy", async () => {
    const running = sandbox as RunningSandbox;
    running.sandbox.autoApprove = true;
    try {
      for (const body of [
        { code_verifier: pkce().verifier },
        { code: "ac_unknown" },
        { redirect_uri: "http://127.0.0.1:53682/elsewhere" },
      ]) {
        const pair = pkce();
        const redirect = await direct(authorizeQuery({}, pair.challenge));
        const freshCode = new URL(redirect.headers.get("location") ?? "").searchParams.get("code") ?? "";
        const request = {
          grant_type: "authorization_code",
          client_id: CLIENT_ID,
          redirect_uri: REDIRECT_URI,
          code: freshCode,
          code_verifier: pair.verifier,
          ...body,
        };
        const response = await viaProxy("/oauth/token", json(request));
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ error: "invalid_grant" });
      }
    } finally {
      running.sandbox.autoApprove = false;
    }
  });

  it("exchanges the code through the proxy (200, Cache-Control: no-store), with all four fields the contract names for a code exchange", async () => {
    const response = await viaProxy(
      "/oauth/token",
      json({
        grant_type: "authorization_code",
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        code,
        code_verifier: verifier,
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("pragma")).toBe("no-cache");
    tokens = (await response.json()) as TokenBody;
    // Prism checks the 200 schema, which admits both grants' shapes; the code exchange must match its own.
    expect(schemaProblems(schemaForGrant("authorization_code"), tokens)).toEqual([]);
  });

  it("refuses the reused code with 400 invalid_grant through the proxy", async () => {
    const response = await viaProxy(
      "/oauth/token",
      json({
        grant_type: "authorization_code",
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        code,
        code_verifier: verifier,
      }),
    );
    expect(response.status).toBe(400);
  });

  it("answers an unknown client at the token endpoint with 400 invalid_client through the proxy", async () => {
    const response = await viaProxy(
      "/oauth/token",
      json({ grant_type: "refresh_token", client_id: "nobody", refresh_token: "rt_x" }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });

  it("signs in again and reads the user, refreshes, and refuses the rotated-away refresh token", async () => {
    // The reused code above revoked the first family (RFC 6749 §4.1.2), so sign in again.
    const pair = pkce();
    const consent = await direct(authorizeQuery({}, pair.challenge));
    expect(consent.status).toBe(200);
    (sandbox as RunningSandbox).sandbox.autoApprove = true;
    const approved = await direct(authorizeQuery({}, pair.challenge));
    const freshCode = new URL(approved.headers.get("location") ?? "").searchParams.get("code") ?? "";
    const exchanged = await viaProxy(
      "/oauth/token",
      json({
        grant_type: "authorization_code",
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        code: freshCode,
        code_verifier: pair.verifier,
      }),
    );
    tokens = (await exchanged.json()) as TokenBody;

    const user = await viaProxy("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${tokens.access_token}`, accept: "application/json" },
    });
    expect(user.status).toBe(200);

    expect(schemaProblems(schemaForGrant("authorization_code"), tokens)).toEqual([]);

    const refreshed = await viaProxy(
      "/oauth/token",
      json({ grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: tokens.refresh_token }),
    );
    expect(refreshed.status).toBe(200);
    const rotated = (await refreshed.json()) as TokenBody;
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(schemaProblems(schemaForGrant("refresh_token"), rotated)).toEqual([]);

    // client_id is optional on a refresh (RFC 6749 §3.2.1): the refresh token names its client.
    const withoutClient = await viaProxy(
      "/oauth/token",
      json({ grant_type: "refresh_token", refresh_token: rotated.refresh_token }),
    );
    expect(withoutClient.status).toBe(200);

    const reused = await viaProxy(
      "/oauth/token",
      json({ grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: tokens.refresh_token }),
    );
    expect(reused.status).toBe(400);
    const afterReuse = await viaProxy("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${rotated.access_token}`, accept: "application/json" },
    });
    expect(afterReuse.status).toBe(401);
    expect(afterReuse.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("answers an expired token with 401 through the proxy after the test clock moves 15 minutes", async () => {
    const issued = sandbox?.sandbox.issueTokens(CLIENT_ID, ["profile:read"]);
    const clock = await direct("/__sandbox/clock", json({ advanceSeconds: 900 }));
    expect(clock.status).toBe(200);
    const response = await viaProxy("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${issued?.accessToken ?? ""}`, accept: "application/json" },
    });
    expect(response.status).toBe(401);
  });

  it("answers a token without profile:read with 403 through the proxy", async () => {
    const issued = sandbox?.sandbox.issueTokens(CLIENT_ID, ["tickets:read"]);
    const response = await viaProxy("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${issued?.accessToken ?? ""}`, accept: "application/json" },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="profile:read"');
  });

  it("revokes through the proxy, form and JSON, then the token is answered 401", async () => {
    const issued = sandbox?.sandbox.issueTokens(CLIENT_ID, ["profile:read"]);
    const access = issued?.accessToken ?? "";
    const form = await viaProxy("/oauth/revoke", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access, token_type_hint: "access_token", client_id: CLIENT_ID }).toString(),
    });
    expect(form.status).toBe(200);
    const again = await viaProxy("/oauth/revoke", json({ token: access, client_id: CLIENT_ID }));
    expect(again.status).toBe(200);
    const withoutClient = await viaProxy("/oauth/revoke", json({ token: access }));
    expect(withoutClient.status).toBe(200);
    const user = await viaProxy("/api/v1/auth/user", {
      headers: { authorization: `Bearer ${access}`, accept: "application/json" },
    });
    expect(user.status).toBe(401);
  });

  it("answers an unknown client at the revocation endpoint with 400 invalid_client through the proxy", async () => {
    const response = await viaProxy("/oauth/revoke", json({ token: "at_x", client_id: "nobody" }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });

  it("answers a malformed bearer token with 401 through the proxy", async () => {
    const response = await viaProxy("/api/v1/auth/user", {
      headers: { authorization: "Bearer a b c", accept: "application/json" },
    });
    expect(response.status).toBe(401);
  });
});
