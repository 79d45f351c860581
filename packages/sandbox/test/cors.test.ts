import { describe, expect, it } from "vitest";
import { CLIENT_ID, REDIRECT_URI, signIn, testSandbox } from "./helpers.js";

// The test sandbox registers http://127.0.0.1:53682/callback and http://localhost:53682/callback.
const ALLOWED = "http://127.0.0.1:53682";
const preflight = (path: string, origin: string) =>
  testSandbox().app.request(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, authorization",
    },
  });

describe("CORS for browser integrations", () => {
  it.each(["/oauth/token", "/oauth/revoke", "/api/v1/auth/user"])(
    "lets the origin of a registered redirect URI preflight %s",
    async (path) => {
      const response = await preflight(path, ALLOWED);
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
      expect(response.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
      expect(response.headers.get("access-control-allow-methods")).toMatch(/POST/);
    },
  );

  // Conformance runs name each browser tab on its requests with Sandbox-Actor (see the ledger).
  it.each(["/oauth/token", "/oauth/revoke", "/api/v1/auth/user"])(
    "lets a browser send the Sandbox-Actor header to %s",
    async (path) => {
      const response = await testSandbox().app.request(path, {
        method: "OPTIONS",
        headers: {
          origin: ALLOWED,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, sandbox-actor",
        },
      });
      expect(response.status).toBe(204);
      const allowed = (response.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(["content-type", "sandbox-actor"]));
    },
  );

  it("refuses a preflight from an origin no client registered, and never answers with *", async () => {
    const response = await preflight("/oauth/token", "https://evil.example");
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("marks API answers readable by an allowed origin and exposes WWW-Authenticate", async () => {
    const sandbox = testSandbox();
    const tokens = await signIn(sandbox);
    const ok = await sandbox.app.request("/api/v1/auth/user", {
      headers: { origin: ALLOWED, authorization: `Bearer ${tokens.access_token}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    const denied = await sandbox.app.request("/api/v1/auth/user", { headers: { origin: ALLOWED } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-expose-headers")).toMatch(/WWW-Authenticate/);
  });

  it("adds nothing for another origin or the authorize page", async () => {
    const sandbox = testSandbox();
    const other = await sandbox.app.request("/api/v1/auth/user", { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const page = await sandbox.app.request(`/oauth/authorize?client_id=${CLIENT_ID}`, { headers: { origin: ALLOWED } });
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
  });
});

// Issue 12, point 5: a registered non-http(s) redirect URI has the origin "null", and the token
// endpoint then allowed `Origin: null`, which any sandboxed iframe or file: page sends.
describe("Origin: null", () => {
  const withNativeClient = () =>
    testSandbox({
      clients: [
        { id: "app", redirectUris: ["myapp:/callback", "com.example.app:/oauth"] },
        { id: CLIENT_ID, redirectUris: [REDIRECT_URI] },
      ],
    });

  it.each(["/oauth/token", "/oauth/revoke", "/api/v1/auth/user"])(
    "is refused on a preflight of %s even with a private-use redirect URI registered",
    async (path) => {
      const response = await withNativeClient().app.request(path, {
        method: "OPTIONS",
        headers: { origin: "null", "access-control-request-method": "POST" },
      });
      expect(response.status).toBe(403);
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
    },
  );

  it("never gets Access-Control-Allow-Origin: null on an answer", async () => {
    const sandbox = withNativeClient();
    const token = await sandbox.app.request("/oauth/token", {
      method: "POST",
      headers: { origin: "null", "content-type": "application/json" },
      body: "{}",
    });
    expect(token.headers.get("access-control-allow-origin")).toBeNull();
    const user = await sandbox.app.request("/api/v1/auth/user", { headers: { origin: "null" } });
    expect(user.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("still allows the http(s) origins registered next to a private-use URI", async () => {
    const response = await withNativeClient().app.request("/oauth/token", {
      method: "OPTIONS",
      headers: { origin: new URL(REDIRECT_URI).origin, "access-control-request-method": "POST" },
    });
    expect(response.status).toBe(204);
  });
});
