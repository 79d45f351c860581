// The facts of the service description (the only document of the service), asserted on the bundle
// that every tool and package reads. A change to the contract that drops one of them fails here.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const contract = JSON.parse(readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"));
const schemas = contract.components.schemas;
/** Follows a local `$ref` of the bundle (`#/components/...`) to what it names. */
const deref = (node: { $ref?: string } & Record<string, any>): any =>
  node.$ref
    ? deref(
        node.$ref
          .slice(2)
          .split("/")
          .reduce((at: any, key: string) => at[key.replace(/~1/g, "/").replace(/~0/g, "~")], contract),
      )
    : node;
const scheme = contract.components.securitySchemes.tenantOAuth;
const authorize = contract.paths["/oauth/authorize"].get;
const token = contract.paths["/oauth/token"].post;
const revoke = contract.paths["/oauth/revoke"].post;
const user = contract.paths["/api/v1/auth/user"].get;
const parameters = authorize.parameters.map(deref);
const param = (name: string) => parameters.find((p: { name: string }) => p.name === name);

const SCOPES = [
  "profile:read",
  "users:read",
  "users:write",
  "contacts:read",
  "contacts:write",
  "tickets:read",
  "tickets:write",
  "files:read",
  "files:write",
  "settings:read",
  "settings:write",
  "custom-fields:read",
  "custom-fields:write",
  "math-scripts:read",
  "math-scripts:write",
  "policy-groups:read",
  "policy-groups:write",
  "products:read",
  "products:write",
  "projects:read",
  "devices:read",
  "contracts:read",
  "contract-options:read",
  "record-types:read",
  "mail-messages:read",
  "mail-messages:write",
  "ticket-filters:read",
  "ticket-filters:write",
  "providers:read",
  "providers:write",
  "schemas:read",
  "table-layouts:read",
  "text-templates:read",
  "text-templates:write",
  "transfers:read",
  "transfers:write",
  "realtime:connect",
];

describe("the contract states every fact of the service description", () => {
  it("is OpenAPI 3.1 with one tenant host, a server variable, for everything", () => {
    expect(contract.openapi).toMatch(/^3\.1\./);
    expect(contract.servers).toHaveLength(1);
    expect(contract.servers[0].url).toBe("https://{tenant_host}");
    expect(contract.servers[0].variables.tenant_host.default).toBeTypeOf("string");
    // No operation or path overrides the server: authorization, token and API share the host.
    for (const [path, item] of Object.entries<Record<string, unknown>>(contract.paths)) {
      expect(item.servers, path).toBeUndefined();
      for (const op of Object.values(item)) expect((op as { servers?: unknown }).servers, path).toBeUndefined();
    }
    // The OAuth URLs are relative, so they resolve against that same host.
    const flow = scheme.flows.authorizationCode;
    for (const url of [flow.authorizationUrl, flow.tokenUrl, flow.refreshUrl, scheme["x-revocation-url"]]) {
      expect(url).toMatch(/^\/oauth\//);
    }
  });

  it.each(SCOPES)("describes the scope %s by its area and access only", (scope) => {
    const [area, access] = scope.split(":");
    expect(scheme.flows.authorizationCode.scopes[scope]).toBe(`${area!.replace(/-/g, " ")} area: ${access}`);
  });

  it("lists exactly the 37 scopes and no other", () => {
    expect(Object.keys(scheme.flows.authorizationCode.scopes).sort()).toEqual([...SCOPES].sort());
    expect(SCOPES).toHaveLength(37);
  });

  it("uses the authorization code flow with authorize, token and refresh URLs, PKCE S256 required", () => {
    expect(scheme.type).toBe("oauth2");
    expect(Object.keys(scheme.flows)).toEqual(["authorizationCode"]);
    expect(scheme.flows.authorizationCode).toMatchObject({
      authorizationUrl: "/oauth/authorize",
      tokenUrl: "/oauth/token",
      refreshUrl: "/oauth/token",
    });
    expect(scheme["x-pkce"]).toMatchObject({ required: true, code_challenge_methods: ["S256"] });
  });

  it("takes a code_verifier of 43 to 128 URL-safe characters", () => {
    const verifier = schemas.CodeVerifier;
    expect(verifier).toMatchObject({ type: "string", minLength: 43, maxLength: 128 });
    const pattern = new RegExp(verifier.pattern);
    expect(pattern.test("a".repeat(43))).toBe(true);
    expect(pattern.test("a".repeat(42))).toBe(false);
    expect(pattern.test("A-._~z09".padEnd(128, "x"))).toBe(true);
    expect(pattern.test("a".repeat(129))).toBe(false);
    expect(pattern.test(`${"a".repeat(42)}+`)).toBe(false);
    expect(scheme["x-pkce"].code_verifier).toMatchObject({ minLength: 43, maxLength: 128 });
  });

  it("accepts only S256 and only response_type=code, both required", () => {
    expect(param("code_challenge_method")).toMatchObject({ required: true, schema: { enum: ["S256"] } });
    expect(param("response_type")).toMatchObject({ required: true, schema: { enum: ["code"] } });
  });

  it("requires state, and marks every parameter it requires beyond the description as an assumption", () => {
    expect(parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      "client_id",
      "code_challenge",
      "code_challenge_method",
      "redirect_uri",
      "response_type",
      "scope",
      "state",
    ]);
    expect(param("state").required).toBe(true);
    for (const name of ["client_id", "redirect_uri", "code_challenge"]) {
      expect(param(name).required, name).toBe(true);
      expect(param(name)["x-assumption"], name).toMatch(/RFC (6749|7636) §/);
    }
    expect(param("scope").required).toBe(false);
    expect(param("scope")["x-assumption"]).toMatch(/not shown/);
    expect(param("redirect_uri").description).toMatch(/exactly match/);
    expect(new RegExp(param("code_challenge").schema.pattern).test("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")).toBe(
      true,
    );
  });

  it("redirects back with code and the unchanged state", () => {
    const redirect = authorize.responses["302"];
    expect(redirect.description).toMatch(/`code`/);
    expect(redirect.description).toMatch(/unchanged\s+`state`/);
    expect(redirect.headers.Location.required).toBe(true);
  });

  it("exchanges codes and refreshes at POST /oauth/token with JSON, discriminated by grant_type, without a secret", () => {
    expect(Object.keys(token.requestBody.content)).toEqual(["application/json"]);
    expect(token["x-required-headers"]).toEqual({ Accept: "application/json", "Content-Type": "application/json" });
    expect(token.security).toEqual([]);
    const body = schemas.TokenRequest;
    expect(body.discriminator.propertyName).toBe("grant_type");
    expect(Object.keys(body.discriminator.mapping).sort()).toEqual(["authorization_code", "refresh_token"]);
    expect(schemas.AuthorizationCodeGrantRequest.required.sort()).toEqual([
      "client_id",
      "code",
      "code_verifier",
      "grant_type",
      "redirect_uri",
    ]);
    expect(schemas.AuthorizationCodeGrantRequest["x-assumption"]).toMatch(/RFC 6749 §4\.1\.3.*RFC 7636 §4\.5/s);
    for (const grant of [schemas.AuthorizationCodeGrantRequest, schemas.RefreshTokenGrantRequest]) {
      expect(Object.keys(grant.properties)).not.toContain("client_secret");
    }
    expect(schemas.RefreshTokenGrantRequest["x-assumption"]).toMatch(/RFC 6749 §6/);
  });

  it("does not require client_id on refresh (RFC 6749 §3.2.1 makes it a MAY there) nor, by the contract's choice, on revocation", () => {
    expect(schemas.RefreshTokenGrantRequest.required).not.toContain("client_id");
    expect(schemas.RevocationRequest.required).not.toContain("client_id");
    expect(schemas.RevocationRequest["x-assumption"]).toMatch(/The schema\s+still admits a request without it/);
    expect(schemas.RefreshTokenGrantRequest.properties.client_id).toBeDefined();
    expect(schemas.RefreshTokenGrantRequest["x-assumption"]).toMatch(/RFC 6749 §3\.2\.1/);
  });

  it("accepts only the 37 scope names in the scope parameter and the refresh request", () => {
    for (const schema of [deref(param("scope").schema), deref(schemas.RefreshTokenGrantRequest.properties.scope)]) {
      const pattern = new RegExp(schema.pattern);
      for (const scope of SCOPES) expect(pattern.test(scope), scope).toBe(true);
      expect(pattern.test(SCOPES.join(" "))).toBe(true);
      for (const bad of [
        "profile:write",
        "admin:read",
        "profile:read  tickets:read",
        " profile:read",
        "profile:read,tickets:read",
        "",
      ]) {
        expect(pattern.test(bad), bad).toBe(false);
      }
    }
  });

  it("answers a code exchange with all four fields, and names that schema per grant", () => {
    const ok = token.responses["200"];
    expect(ok["x-response-schema-by-grant-type"]).toEqual({
      authorization_code: "#/components/schemas/TokenResponse",
      refresh_token: "#/components/schemas/RefreshTokenResponse",
    });
    expect(Object.keys(deref(ok.headers.Pragma).schema)).toContain("const");
    expect(deref(ok.headers.Pragma).schema.const).toBe("no-cache");
    expect(deref(ok.headers["Cache-Control"]).schema.const).toBe("no-store");
  });

  it("states the version fact: the /api/v1 prefix, apart from info.version", () => {
    expect(contract.info.description).toMatch(/path prefix carries the version of the API: `\/api\/v1`/);
    expect(contract.info.description).toMatch(/`info\.version` is the version of the contract document/);
    for (const path of Object.keys(contract.paths).filter((p) => !p.startsWith("/oauth/")))
      expect(path).toMatch(/^\/api\/v1\//);
  });

  it("states the token response fields, the 15-minute and 30-day lifetimes and rotation", () => {
    expect(schemas.TokenResponse.required.sort()).toEqual([
      "access_token",
      "expires_in",
      "refresh_token",
      "token_type",
    ]);
    expect(schemas.AccessToken["x-lifetime-seconds"]).toBe(15 * 60);
    expect(schemas.RefreshToken["x-lifetime-seconds"]).toBe(30 * 24 * 60 * 60);
    expect(scheme["x-token-lifetimes"]).toEqual({ access_token_seconds: 900, refresh_token_seconds: 2592000 });
    expect(schemas.AccessToken.description).toMatch(/15 minutes/);
    expect(schemas.RefreshToken.description).toMatch(/30 days/);
    expect(schemas.RefreshToken.description).toMatch(/rotated/);
    expect(schemas.ExpiresIn["x-assumption"]).toMatch(/seconds/);
    expect(schemas.TokenType["x-assumption"]).toMatch(/Bearer/);
  });

  it("answers token errors with an RFC 6749 §5.2 body, marked as an assumption", () => {
    const error = deref(token.responses["400"]);
    expect(error.content["application/json"].schema.$ref).toBe("#/components/schemas/OAuthError");
    expect(schemas.OAuthError.required).toEqual(["error"]);
    expect(schemas.OAuthError["x-assumption"]).toMatch(/RFC 6749 §5\.2/);
  });

  it("revokes the current access token at POST /oauth/revoke, following RFC 7009", () => {
    expect(revoke.description).toMatch(/disconnects the integration/);
    expect(revoke["x-assumption"]).toMatch(/RFC 7009/);
    expect(schemas.RevocationRequest.required).toContain("token");
    expect(revoke.responses["200"]).toBeDefined();
  });

  it("protects GET /api/v1/auth/user with a bearer token and profile:read, and answers 403 on a missing scope", () => {
    expect(user.security).toEqual([{ tenantOAuth: ["profile:read"] }]);
    expect(Object.keys(user.responses).sort()).toEqual(["200", "401", "403"]);
    const forbidden = deref(user.responses["403"]);
    expect(forbidden.description).toMatch(/lacks the scope/);
    // "One of the accepted scopes suffices" is OpenAPI's OR: one requirement object per scope.
    expect(contract["x-scope-rules"]).toBeUndefined();
    expect(scheme.description).toMatch(/one security requirement object per accepted scope/);
  });

  it("leaves the user record open: an object with unknown fields, its example labelled illustrative", () => {
    expect(contract.components.examples.UserRecord.summary).toMatch(/^Illustrative/);
    expect(schemas.User.examples).toBeUndefined();
    expect(schemas.User.type).toBe("object");
    expect(schemas.User.additionalProperties).toBe(true);
    expect(schemas.User.properties).toBeUndefined();
    expect(schemas.User.required).toBeUndefined();
  });

  it("carries every OAuth operation as public and gives every operation an id, summary and examples", () => {
    for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(contract.paths)) {
      for (const op of Object.values(item)) {
        expect(op.operationId, path).toMatch(/^[a-z][A-Za-z]+$/);
        expect(op.summary, path).toBeTypeOf("string");
        expect(op.security, path).toBeDefined();
        if (path.startsWith("/oauth/")) expect(op.security, path).toEqual([]);
      }
    }
  });
});

describe("the limits an independent fuzzer checks answers against", () => {
  const matches = (pattern: string, value: string) => new RegExp(pattern).test(value);

  it("takes token_type as Bearer in any casing and nothing else (RFC 6749 §5.1, RFC 6750 §4)", () => {
    for (const value of ["Bearer", "bearer", "BEARER"])
      expect(matches(schemas.TokenType.pattern, value), value).toBe(true);
    for (const value of ["Bearer ", "MAC", "DPoP", ""])
      expect(matches(schemas.TokenType.pattern, value), value).toBe(false);
  });

  it("takes the access token as an RFC 6750 §2.1 b64token, marked as the contract's assumption", () => {
    expect(matches(schemas.AccessToken.pattern, "at_2YotnFZFEjr1zCsicMWpAA")).toBe(true);
    expect(matches(schemas.AccessToken.pattern, "abc+/=")).toBe(true);
    for (const value of ["a b", 'a"b', "=abc", "a,b"])
      expect(matches(schemas.AccessToken.pattern, value), value).toBe(false);
    expect(schemas.AccessToken["x-assumption"]).toMatch(/RFC 6750 §2\.1/);
  });

  it("limits error and error_description to the characters RFC 6749 §5.2 allows (no double quote, no backslash)", () => {
    const { error, error_description: description } = schemas.OAuthError.properties;
    expect(matches(error.pattern, "invalid_grant")).toBe(true);
    expect(matches(description.pattern, "The code was already used.")).toBe(true);
    for (const bad of ['say "x"', "a\\b", "é", "line\nbreak"])
      expect(matches(description.pattern, bad), bad).toBe(false);
  });

  it("requires a 401 challenge with at least one auth-param and a 403 challenge naming insufficient_scope (RFC 6750 §3)", () => {
    const invalid = contract.components.headers.InvalidTokenChallenge.schema.pattern;
    expect(matches(invalid, 'Bearer realm="tenant-sandbox"')).toBe(true);
    expect(matches(invalid, 'Bearer error="invalid_token"')).toBe(true);
    expect(matches(invalid, "Bearer")).toBe(false);
    expect(matches(invalid, 'Basic realm="x"')).toBe(false);
    const insufficient = contract.components.headers.InsufficientScopeChallenge.schema.pattern;
    expect(matches(insufficient, 'Bearer realm="t", error="insufficient_scope", scope="profile:read"')).toBe(true);
    expect(matches(insufficient, 'Bearer error="invalid_token"')).toBe(false);
  });

  it("sends the browser back with code and state, or error, in the query of the redirect (description §4, RFC 6749 §4.1.2.1)", () => {
    const location = authorize.responses["302"].headers.Location.schema.pattern;
    expect(matches(location, "http://127.0.0.1:53682/callback?code=abc&state=s")).toBe(true);
    expect(matches(location, "http://127.0.0.1:53682/callback?state=s&code=abc")).toBe(true);
    expect(matches(location, "https://app.example.org/cb?x=1&code=abc&state=s")).toBe(true);
    expect(matches(location, "http://127.0.0.1:53682/callback?state=s&error=access_denied")).toBe(true);
    // An error redirect returns state only when the request carried one (RFC 6749 §4.1.2.1).
    expect(matches(location, "http://127.0.0.1:53682/callback?error=invalid_request")).toBe(true);
    expect(matches(location, "http://127.0.0.1:53682/callback?state=s")).toBe(false);
    // Issue 37: the description returns the unchanged state with the code, so a code alone is no valid answer.
    expect(matches(location, "http://127.0.0.1:53682/callback?code=abc")).toBe(false);
    expect(matches(location, "http://127.0.0.1:53682/callback?code=abc#state=s")).toBe(false);
    expect(matches(location, "http://127.0.0.1:53682/callback?code=abc&xstate=s")).toBe(false);
  });
});

describe("assumptions", () => {
  it("cite an RFC section or say what is not shown, every one", () => {
    const found: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${at}/${i}`));
      else if (node && typeof node === "object") {
        for (const [k, v] of Object.entries(node)) {
          if (k === "x-assumption") {
            found.push(at);
            expect(v, at).toMatch(/RFC \d+ §|not shown/);
          } else walk(v, `${at}/${k}`);
        }
      }
    };
    walk(contract, "#");
    expect(found.length).toBeGreaterThanOrEqual(30);
  });
});
