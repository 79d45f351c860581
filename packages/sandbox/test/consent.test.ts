import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  authorizeQuery,
  CLIENT_ID,
  locationParams,
  pkce,
  postForm,
  postJson,
  REDIRECT_URI,
  testSandbox,
} from "./helpers.js";

async function consentRequestId(
  sandbox: ReturnType<typeof testSandbox>,
  state = "st-1",
): Promise<{ requestId: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const html = await (await sandbox.app.request(authorizeQuery({ state }, challenge))).text();
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1];
  if (requestId === undefined) throw new Error("no request id on the consent page");
  return { requestId, verifier };
}

describe("POST /__sandbox/consent", () => {
  it("takes the form fields the README names for a headless driver, exactly those of the consent page", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const html = await (await sandbox.app.request(authorizeQuery({ state: "s" }, pkce().challenge))).text();
    const fields = [...html.matchAll(/<(?:input|button|select)[^>]* name="([^"]+)"(?: value="([^"]*)")?/g)].map(
      ([, name, value]) => `${name}=${value}`,
    );
    expect(fields).toEqual([
      expect.stringMatching(/^request_id=.+/),
      "user=undefined",
      "decision=approve",
      "decision=deny",
    ]);
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const row = readme.split("\n").find((line) => line.startsWith("| `POST /__sandbox/consent` |")) ?? "";
    expect(row).toContain("`request_id`");
    expect(row).toContain("`decision=approve\\|deny`");
    expect(row).toContain("`user`");
  });

  it("on approval redirects with a code that exchanges for tokens, and the unchanged state", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { requestId, verifier } = await consentRequestId(sandbox, "my state");
    const response = await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "approve" });
    expect(response.status).toBe(302);
    const params = locationParams(response);
    expect(params.get("state")).toBe("my state");
    const code = params.get("code") ?? "";
    const token = await postJson(sandbox, "/oauth/token", {
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    expect(token.status).toBe(200);
  });

  it("on denial redirects with error=access_denied and the state", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { requestId } = await consentRequestId(sandbox, "deny-state");
    const response = await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "deny" });
    expect(response.status).toBe(302);
    const params = locationParams(response);
    expect(params.get("error")).toBe("access_denied");
    expect(params.get("state")).toBe("deny-state");
    expect(params.has("code")).toBe(false);
  });

  it("accepts a request id only once", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { requestId } = await consentRequestId(sandbox);
    expect((await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "approve" })).status).toBe(
      302,
    );
    const again = await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "approve" });
    expect(again.status).toBe(400);
    expect(again.headers.get("location")).toBeNull();
  });

  it("refuses a consent page older than ten minutes", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const { requestId } = await consentRequestId(sandbox);
    sandbox.clock.advance(601);
    expect((await postForm(sandbox, "/__sandbox/consent", { request_id: requestId, decision: "approve" })).status).toBe(
      400,
    );
  });

  it.each([
    ["an unknown request id", { request_id: "req_forged", decision: "approve" }],
    ["a missing decision", { request_id: "req_x" }],
    ["an unknown decision", { request_id: "req_x", decision: "maybe" }],
  ])("answers %s with a 400 page", async (_name, body) => {
    const sandbox = testSandbox({ autoApprove: false });
    const response = await postForm(sandbox, "/__sandbox/consent", body);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("answers a JSON array body with a 400 page", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    expect((await postJson(sandbox, "/__sandbox/consent", "[]")).status).toBe(400);
  });
});

// Regression: with `form-action 'self'` alone, Chromium blocked the Approve form, because CSP's
// form-action also covers the redirect to the client's redirect URI on another origin.
describe("the consent page's content security policy", () => {
  it("lets the form's redirect reach the origin of the requested redirect URI, and no other", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const response = await sandbox.app.request(authorizeQuery());
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`form-action 'self' ${new URL(REDIRECT_URI).origin};`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it("keeps form-action 'self' alone on error pages", async () => {
    const sandbox = testSandbox({ autoApprove: false });
    const response = await sandbox.app.request(authorizeQuery({ client_id: "nobody" }));
    expect(response.headers.get("content-security-policy")).toContain("form-action 'self';");
  });
});
