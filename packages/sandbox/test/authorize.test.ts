import { describe, expect, it } from "vitest";
import {
  authorizeQuery,
  CLIENT_ID,
  LIMITED_CLIENT_ID,
  locationParams,
  OTHER_REDIRECT_URI,
  pkce,
  REDIRECT_URI,
  testSandbox,
} from "./helpers.js";

describe("GET /oauth/authorize: client and redirect_uri errors are pages, never redirects", () => {
  const sandbox = testSandbox();

  it.each([
    ["an unknown client_id", { client_id: "nobody" }],
    ["a missing client_id", { client_id: undefined }],
    ["an empty client_id", { client_id: "" }],
    ["an unregistered redirect_uri", { redirect_uri: "http://127.0.0.1:53682/other" }],
    ["a redirect_uri differing by a trailing slash", { redirect_uri: `${REDIRECT_URI}/` }],
    ["a redirect_uri differing only in case", { redirect_uri: REDIRECT_URI.toUpperCase() }],
    ["a missing redirect_uri", { redirect_uri: undefined }],
  ])("answers %s with a 400 HTML page and no Location", async (_name, overrides) => {
    const response = await sandbox.app.request(authorizeQuery(overrides));
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("<h1>Invalid request</h1>");
  });

  it("answers a repeated redirect_uri with a page", async () => {
    const response = await sandbox.app.request(`${authorizeQuery()}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`);
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });

  it("escapes the client_id it echoes on the error page", async () => {
    const response = await sandbox.app.request(authorizeQuery({ client_id: '<script>alert("x")</script>' }));
    const html = await response.text();
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  });
});

describe("GET /oauth/authorize: other errors redirect with error and the unchanged state", () => {
  const sandbox = testSandbox();

  it.each([
    ["a missing response_type", { response_type: undefined }, "invalid_request"],
    ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
    ["a missing code_challenge", { code_challenge: undefined }, "invalid_request"],
    ["a code_challenge of 42 characters", { code_challenge: "a".repeat(42) }, "invalid_request"],
    ["a code_challenge with padding", { code_challenge: `${"a".repeat(42)}=` }, "invalid_request"],
    ["a missing code_challenge_method", { code_challenge_method: undefined }, "invalid_request"],
    ["code_challenge_method=plain", { code_challenge_method: "plain" }, "invalid_request"],
    ["an unknown scope", { scope: "profile:read admin:all" }, "invalid_scope"],
    ["an empty scope", { scope: "" }, "invalid_scope"],
    ["scopes separated by two spaces", { scope: "profile:read  tickets:read" }, "invalid_scope"],
  ])("redirects %s with error=%s", async (_name, overrides, error) => {
    const response = await sandbox.app.request(authorizeQuery({ state: "s t&a=te/ü", ...overrides }));
    expect(response.status).toBe(302);
    const location = response.headers.get("location") ?? "";
    expect(location.startsWith(`${REDIRECT_URI}?`)).toBe(true);
    const params = locationParams(response);
    expect(params.get("error")).toBe(error);
    expect(params.get("state")).toBe("s t&a=te/ü");
    expect(params.get("code")).toBeNull();
  });

  it("redirects a missing state with invalid_request and no state", async () => {
    const response = await sandbox.app.request(authorizeQuery({ state: undefined }));
    expect(response.status).toBe(302);
    const params = locationParams(response);
    expect(params.get("error")).toBe("invalid_request");
    expect(params.has("state")).toBe(false);
  });

  it("redirects a repeated scope parameter with invalid_request", async () => {
    const response = await sandbox.app.request(`${authorizeQuery()}&scope=profile:read`);
    expect(locationParams(response).get("error")).toBe("invalid_request");
  });

  it("refuses a scope outside the client's allow-list with invalid_scope", async () => {
    const response = await sandbox.app.request(authorizeQuery({ client_id: LIMITED_CLIENT_ID, scope: "profile:read" }));
    expect(locationParams(response).get("error")).toBe("invalid_scope");
  });
});

describe("GET /oauth/authorize: success", () => {
  it("with auto-approve redirects to the registered URI with a code and the unchanged state", async () => {
    const sandbox = testSandbox();
    const response = await sandbox.app.request(authorizeQuery({ state: "xyz-Ä 1", redirect_uri: OTHER_REDIRECT_URI }));
    expect(response.status).toBe(302);
    expect(response.headers.get("location")?.startsWith(`${OTHER_REDIRECT_URI}?`)).toBe(true);
    const params = locationParams(response);
    expect(params.get("code")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(params.get("state")).toBe("xyz-Ä 1");
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("keeps the query of a registered redirect URI and appends the result", async () => {
    const uri = "http://127.0.0.1:9999/cb?tenant=a%20b";
    const sandbox = testSandbox({ clients: [{ id: CLIENT_ID, redirectUris: [uri] }] });
    const response = await sandbox.app.request(authorizeQuery({ redirect_uri: uri }));
    const location = response.headers.get("location") ?? "";
    expect(location.startsWith(`${uri}&code=`)).toBe(true);
    expect(new URL(location).searchParams.get("tenant")).toBe("a b");
  });

  it("without auto-approve shows a consent page naming the client and each scope with its description", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const response = await sandbox.app.request(authorizeQuery({ scope: "profile:read tickets:read" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const html = await response.text();
    expect(html).toContain(`<strong>${CLIENT_ID}</strong>`);
    expect(html).toContain("<code>profile:read</code>: profile area: read");
    expect(html).toContain("<code>tickets:read</code>: tickets area: read");
    expect(html).toContain('action="/__sandbox/consent"');
    expect(html).toContain('value="approve"');
    expect(html).toContain('value="deny"');
  });

  it("puts only an opaque request id in the consent form, not the request's parameters", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { challenge } = pkce();
    const html = await (await sandbox.app.request(authorizeQuery({ state: "secret-state-value" }, challenge))).text();
    const inputs = [...html.matchAll(/<input [^>]*>/g)].map((match) => match[0]);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatch(/name="request_id" value="req_[A-Za-z0-9_-]+"/);
    expect(html).not.toContain("secret-state-value");
    expect(html).not.toContain(challenge);
  });

  it("grants profile:read when scope is omitted and the client has no allow-list", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const html = await (await sandbox.app.request(authorizeQuery({ scope: undefined }))).text();
    expect(html).toContain("<code>profile:read</code>");
  });

  it("can switch auto-approve at run time", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    expect((await sandbox.app.request(authorizeQuery())).status).toBe(200);
    sandbox.autoApprove = true;
    expect((await sandbox.app.request(authorizeQuery())).status).toBe(302);
  });
});
