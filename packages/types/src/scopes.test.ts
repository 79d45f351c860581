import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, expectTypeOf, it } from "vitest";
import { scopeDescriptions, scopes, type RevocationRequest, type Scope, type TokenRequest } from "./index.js";

const contract = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve("@tenant-integration/openapi/openapi.json"), "utf8"),
);
const contractScopes: Record<string, string> =
  contract.components.securitySchemes.tenantOAuth.flows.authorizationCode.scopes;

describe("generated scope list", () => {
  // The 37 names themselves are asserted against the service description in spec/test; here the
  // generated list must be exactly the contract's security scheme, in its order.
  it("holds exactly the scope names of the contract's oauth2 scheme, in its order", () => {
    expect(scopes).toEqual(Object.keys(contractScopes));
    expect(scopes).toHaveLength(37);
  });

  it("carries each scope's description from the contract", () => {
    expect(scopeDescriptions).toEqual(contractScopes);
  });

  it("describes every scope by its area and access only", () => {
    for (const scope of scopes) expect(scopeDescriptions[scope]).toMatch(/^[a-z ]+ area: (read|write|connect)$/);
    expect(scopeDescriptions["custom-fields:write"]).toBe("custom fields area: write");
    expect(scopeDescriptions["realtime:connect"]).toBe("realtime area: connect");
  });

  it("types Scope as the union of exactly those names", () => {
    expectTypeOf<"profile:read">().toExtend<Scope>();
    expectTypeOf<"realtime:connect">().toExtend<Scope>();
    // @ts-expect-error a scope the service does not have
    const unknown: Scope = "profile:write";
    void unknown;
  });

  it("narrows the token request on grant_type", () => {
    const narrow = (body: TokenRequest) =>
      body.grant_type === "refresh_token" ? body.refresh_token : body.code_verifier;
    expectTypeOf(narrow).returns.toEqualTypeOf<string>();
    // @ts-expect-error a refresh grant has no code_verifier
    const bad: TokenRequest = { grant_type: "refresh_token", client_id: "c", code_verifier: "v" };
    void bad;
  });

  it("types client_id as optional on refresh (RFC 6749 §3.2.1) and, as the contract admits, on revocation (RFC 7009 §5 has a public client send it)", () => {
    const refresh: TokenRequest = { grant_type: "refresh_token", refresh_token: "rt" };
    const revoke: RevocationRequest = { token: "at" };
    void [refresh, revoke];
  });
});
