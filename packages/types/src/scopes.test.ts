import { describe, expect, expectTypeOf, it } from "vitest";
import { scopeDescriptions, scopes, type Scope, type TokenRequest } from "./index.js";

describe("generated scope list", () => {
  it("holds the 37 scope names of the service description, in its order", () => {
    expect(scopes).toEqual([
      "profile:read",
      "users:read", "users:write",
      "contacts:read", "contacts:write",
      "tickets:read", "tickets:write",
      "files:read", "files:write",
      "settings:read", "settings:write",
      "custom-fields:read", "custom-fields:write",
      "math-scripts:read", "math-scripts:write",
      "policy-groups:read", "policy-groups:write",
      "products:read", "products:write",
      "projects:read",
      "devices:read",
      "contracts:read",
      "contract-options:read",
      "record-types:read",
      "mail-messages:read", "mail-messages:write",
      "ticket-filters:read", "ticket-filters:write",
      "providers:read", "providers:write",
      "schemas:read",
      "table-layouts:read",
      "text-templates:read", "text-templates:write",
      "transfers:read", "transfers:write",
      "realtime:connect",
    ]);
  });

  it("describes every scope", () => {
    for (const scope of scopes) expect(scopeDescriptions[scope]).toMatch(/\S/);
  });

  it("types Scope as the union of exactly those names", () => {
    expectTypeOf<"profile:read">().toExtend<Scope>();
    expectTypeOf<"realtime:connect">().toExtend<Scope>();
    // @ts-expect-error a scope the service does not have
    const unknown: Scope = "profile:write";
    void unknown;
  });

  it("narrows the token request on grant_type", () => {
    const narrow = (body: TokenRequest) => (body.grant_type === "refresh_token" ? body.refresh_token : body.code_verifier);
    expectTypeOf(narrow).returns.toEqualTypeOf<string>();
    // @ts-expect-error a refresh grant has no code_verifier
    const bad: TokenRequest = { grant_type: "refresh_token", client_id: "c", code_verifier: "v" };
    void bad;
  });
});
