import { describe, expect, it } from "vitest";
import { contractProblems } from "./support/contract.js";

describe("the contract checker used by the contract and fuzz tests", () => {
  it("accepts a documented response", async () => {
    const response = Response.json(
      { access_token: "a", refresh_token: "r", token_type: "Bearer", expires_in: 900 },
      { headers: { "cache-control": "no-store", pragma: "no-cache" } },
    );
    expect(await contractProblems("/oauth/token", "POST", response)).toEqual([]);
  });

  it("reports an undocumented status, a missing header, a wrong body and a wrong content type", async () => {
    expect(await contractProblems("/oauth/token", "POST", new Response(null, { status: 500 }))).toEqual([
      "status 500 is not documented for POST /oauth/token",
    ]);
    const noHeader = Response.json({ access_token: "a", token_type: "Bearer", expires_in: 900 });
    expect(await contractProblems("/oauth/token", "POST", noHeader)).toEqual([
      "missing header Cache-Control",
      "missing header Pragma",
    ]);
    const badBody = Response.json({ error: "" }, { status: 400, headers: { "cache-control": "no-store" } });
    expect((await contractProblems("/oauth/token", "POST", badBody))[0]).toMatch(/^body: /);
    const html = new Response("<p>", {
      status: 401,
      headers: { "content-type": "text/html", "www-authenticate": 'Bearer realm="tenant-sandbox"' },
    });
    expect(await contractProblems("/api/v1/auth/user", "GET", html)).toEqual([
      'content type "text/html" is not documented for 401',
    ]);
  });

  it("checks the Location of a redirect is a URI", async () => {
    const response = new Response(null, { status: 302, headers: { location: "not a uri" } });
    expect((await contractProblems("/oauth/authorize", "GET", response))[0]).toMatch(/^header Location/);
  });
});
