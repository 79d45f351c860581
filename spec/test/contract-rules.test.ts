// The contract's own rules (scripts/contract-rules.mjs, a step of `pnpm lint`): the bundle passes,
// and each planted violation, made on a copy of the bundle, is named.
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { checkContractRules } from "../scripts/contract-rules.mjs";
import { contract } from "./support/schema.js";

type Contract = typeof contract;
const planted = (edit: (copy: Contract) => void): string[] => {
  const copy = structuredClone(contract);
  edit(copy);
  return checkContractRules(copy);
};
const scopes = (c: Contract) => c.components.securitySchemes.tenantOAuth.flows.authorizationCode.scopes;

describe("the contract's own rules", () => {
  it("pass on the contract as it is", () => {
    expect(checkContractRules(contract)).toEqual([]);
  });

  it("refuse a scope meaning beyond area and access (regression: 'Create and change users')", () => {
    expect(planted((c) => (scopes(c)["users:write"] = "Create and change users."))).toEqual([
      expect.stringMatching(/scope users:write .* "users area: write"/),
    ]);
  });

  it.each([
    ["the RFC 8252 exception", "Matched exactly, except RFC 8252 §7.3 for loopback."],
    ["any port", "A loopback URI registered without a port accepts any port."],
    ["a varying port", "For a native client the port may vary at request time."],
  ])("refuse a loopback port exception in a description: %s", (_case, text) => {
    const problems = planted((c) => (c.components.parameters.RedirectUri.description = text));
    expect(problems).toEqual([expect.stringMatching(/RedirectUri\/description lets a redirect URI vary its port/)]);
  });

  it.each(["RefreshTokenGrantRequest", "RevocationRequest"])("refuse a required client_id in %s", (name) => {
    const problems = planted((c) => c.components.schemas[name].required.push("client_id"));
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^${name} requires client_id`))]);
  });

  it("refuse a scope parameter that accepts any scope-token (regression: the RFC 6749 §3.3 grammar alone)", () => {
    const problems = planted(
      (c) =>
        (c.components.schemas.ScopeList.pattern = "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+( [\\x21\\x23-\\x5B\\x5D-\\x7E]+)*$"),
    );
    expect(problems).toContain('GET /oauth/authorize parameter scope accepts the unknown scope "profile:write"');
    expect(problems).toContain('RefreshTokenGrantRequest.scope accepts the unknown scope "profile:write"');
  });

  it("refuse a refresh scope field with no constraint, and one that drops a name", () => {
    expect(
      planted((c) => (c.components.schemas.RefreshTokenGrantRequest.properties.scope = { type: "string" })),
    ).toEqual([expect.stringMatching(/^RefreshTokenGrantRequest.scope accepts any string/)]);
    expect(
      planted(
        (c) =>
          (c.components.schemas.ScopeList.pattern = c.components.schemas.ScopeList.pattern.replaceAll(
            "|realtime:connect",
            "",
          )),
      ),
    ).toContain("GET /oauth/authorize parameter scope rejects the scope names realtime:connect");
  });

  it("refuse two scopes in one security requirement object, and take them as two objects", () => {
    const user = (c: Contract) => c.paths["/api/v1/auth/user"].get;
    expect(planted((c) => (user(c).security = [{ tenantOAuth: ["profile:read", "users:read"] }]))).toEqual([
      expect.stringMatching(/^GET \/api\/v1\/auth\/user security\[0\] lists 2 scopes in one requirement object/),
    ]);
    expect(
      planted((c) => (user(c).security = [{ tenantOAuth: ["profile:read"] }, { tenantOAuth: ["users:read"] }])),
    ).toEqual([]);
  });
});

describe("the contract's sources", () => {
  it("point at no file outside the repository (regression: redocly.yaml named a toolchain note beside the repository)", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const { dirname, join } = await import("node:path");
    const { fileURLToPath } = await import("node:url");
    const specDir = join(dirname(fileURLToPath(import.meta.url)), "..");
    const files = readdirSync(specDir, { recursive: true, encoding: "utf8" }).filter(
      (file) => !/^(node_modules|dist|\.turbo)\b/.test(file) && /\.(ya?ml|json|ts|mjs|md)$/.test(file),
    );
    expect(files.length).toBeGreaterThan(40);
    const outside = files.filter((file) => /\.\.\/(\.\.\/)*shared\//.test(readFileSync(join(specDir, file), "utf8")));
    expect(outside).toEqual([]);
  });
});
