// Regression tests for the audit of issue 19: a careful reader with the RFCs at hand found sentences
// of the contract that contradict the service description, misread an RFC, state an invention
// without its x-assumption, or are false. Each test names the defect it guards, reads the bundle
// every tool reads, and fails on the text the audit found. The guides' other behaviour sentences
// are held to the description by apps/docs/test/statements.test.ts.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const contract = JSON.parse(readFileSync(require.resolve("@tenant-integration/openapi/openapi.json"), "utf8"));
const { schemas, examples, headers, responses } = contract.components;
const guides: string = contract.info.description;
const authorize = contract.paths["/oauth/authorize"].get;
const token = contract.paths["/oauth/token"].post;
const revoke = contract.paths["/oauth/revoke"].post;
const user = contract.paths["/api/v1/auth/user"].get;

/** Follows a local `$ref` of the bundle to what it names. */
const deref = (node: any): any =>
  node?.$ref
    ? deref(
        node.$ref
          .slice(2)
          .split("/")
          .reduce((at: any, key: string) => at[key.replace(/~1/g, "/").replace(/~0/g, "~")], contract),
      )
    : node;

/** The markdown of the `## <title>` section of the guides. */
const section = (title: string): string => {
  const start = guides.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`no guide section "${title}"`);
  const end = guides.indexOf("\n## ", start + 1);
  return guides.slice(start, end === -1 ? undefined : end);
};

/** Every object of the bundle that has a string `description`, with that description. */
function describedNodes(
  node: unknown = contract,
  found: { node: any; text: string }[] = [],
): { node: any; text: string }[] {
  if (Array.isArray(node)) node.forEach((item) => describedNodes(item, found));
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if ((key === "description" || key === "summary") && typeof value === "string") found.push({ node, text: value });
      else describedNodes(value, found);
    }
  }
  return found;
}

const squash = (text: string) => text.replace(/\s+/g, " ");
/** The sentences of a text (markdown table rows and list items count as one each). */
const sentences = (text: string): string[] =>
  squash(text.replace(/\n\s*(\||- |\d+\. )/g, "\n\n$1"))
    .split(/(?<=[.:;!?])\s+(?=[A-Z`"(|-])|\n\n/)
    .map((s) => s.trim())
    .filter(Boolean);

/** A sentence is marked when it says it is assumed, or when the object it describes carries an x-assumption. */
const MARK =
  /assum|not shown|description (shows no|does not show)|contract's (reading|choice|bound)|the kit's|x-assumption/i;

/** The comments of a text's code blocks, consecutive `//` lines joined. */
const comments = (text: string): string[] =>
  [...text.matchAll(/(?:^[ \t]*\/\/.*\n?)+/gm)].map((match) => squash(match[0].replace(/^[ \t]*\/\/ ?/gm, "")));

describe("issue 19: contradictions of the service description", () => {
  it("calls tokens the only stateful things the description shows, never the only stateful things of the service", () => {
    const claims = describedNodes()
      .flatMap(({ text }) => sentences(text))
      .filter((s) => /only stateful things/.test(s));
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) expect(claim).toMatch(/only stateful things (the service description shows|shown)/);
  });

  it("says that a refresh may rotate the refresh token, and gives strict rotation as the sandbox's default and the kit's assumption", () => {
    const all = describedNodes().flatMap(({ text }) => sentences(text));
    expect(
      all.filter(
        (s) => /\bA refresh rotates\b|\brefresh(es)? with rotation\b|the old one is dead once/.test(s) && !MARK.test(s),
      ),
    ).toEqual([]);
    const paragraph = section("More than one process").split("\n\n")[1]!;
    expect(paragraph).toMatch(/may rotate the refresh token/);
    expect(paragraph).toMatch(/whether the old one stays valid is not shown/);
    expect(paragraph).toMatch(/The kit assumes\s+the strictest case, strict rotation/);
    expect(paragraph).toMatch(/the sandbox does by default \(`--rotation-grace 0`\)/);
  });
});

describe("issue 19: misread RFCs", () => {
  it.each([
    ["TokenResponse", schemas.TokenResponse],
    ["RefreshTokenResponse", schemas.RefreshTokenResponse],
  ])(
    "makes %s.scope REQUIRED when the granted scope differs from the requested one (RFC 6749 §5.1, §3.3), not a 'may'",
    (_name, schema) => {
      const scope = schema.properties.scope;
      expect(scope.description).toMatch(/Present whenever/);
      expect(scope.description).not.toMatch(/\bmay return\b/);
      expect(scope["x-assumption"]).toMatch(/REQUIRED otherwise/);
      expect(scope["x-assumption"]).toMatch(/§3\.3/);
    },
  );

  it("has the public client send client_id on revocation (RFC 7009 §5), citing RFC 6749 §2.3 and never §3.2.1", () => {
    const revocation = schemas.RevocationRequest;
    expect(revocation.properties.client_id.description).toMatch(/RFC 7009 §5/);
    expect(revocation["x-assumption"]).toMatch(/RFC 7009 §5/);
    expect(revocation["x-assumption"]).toMatch(/RFC 6749 §2\.3/);
    expect(JSON.stringify(revocation)).not.toMatch(/§3\.2\.1/);
    expect(JSON.stringify(revoke)).not.toMatch(/§3\.2\.1/);
  });

  it("keeps token_type_hint an open string: an unknown hint is ignored and answered 200 (RFC 7009 §2.1, §2.2)", () => {
    const hint = schemas.RevocationRequest.properties.token_type_hint;
    expect(hint.type).toBe("string");
    expect(hint.enum).toBeUndefined();
    expect(hint.description).toMatch(/does not know is ignored/);
  });

  it("takes the freedom to choose the redirect status from RFC 6749 §1.7, not §4.1.2", () => {
    const redirect = authorize.responses["302"];
    expect(redirect["x-assumption"]).toMatch(/RFC 6749 §1\.7/);
    expect(redirect["x-assumption"]).not.toMatch(/§4\.1\.2/);
    expect(section("What the service description leaves open")).toMatch(/\*\*Redirect status\*\*[^\n]*RFC 6749 §1\.7/);
  });
});

describe("issue 19: inventions carry their mark", () => {
  // Each of the audit's unmarked inventions, found by its words: the sentence that states it is
  // marked, or the object it describes carries an x-assumption about it (the last column).
  it.each([
    ["the scope parameter takes only the 37 names", /only these names|only the 37 names/, /37/],
    ["a general OAuth library is refused with 400 invalid_request", /library is refused/, null],
    ["the service has no discovery document", /discovery document/, null],
    ["the revocation endpoint takes the form body of RFC 7009", /form body of RFC 7009/, null],
    ["the code is single use", /single[- ]use/i, /single use/],
    [
      "a revoked token is answered 401",
      /revoked token (is|are) (then )?answered 401|that token are answered 401/,
      /401/,
    ],
    ["the refresh response's scope field", /granted scopes, space-separated/, /scope/],
  ])("marks the sentence that says %s", (_what, words, subject) => {
    const found = describedNodes().flatMap(({ node, text }) =>
      [...sentences(text.replace(/^```[\s\S]*?^```$/gm, "")), ...comments(text)]
        .filter((s) => words.test(squash(s)))
        .map((s) => ({
          sentence: squash(s),
          marked:
            MARK.test(s) ||
            (subject !== null && typeof node["x-assumption"] === "string" && subject.test(node["x-assumption"])),
        })),
    );
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter((f) => !f.marked).map((f) => f.sentence)).toEqual([]);
  });

  it("no longer says that a refresh response carries refresh_token only when it rotates, as if the description said so", () => {
    for (const { text } of describedNodes()) expect(text).not.toMatch(/present only when (it is )?rotated/);
    expect(token.responses["200"]["x-assumption"]).toMatch(
      /leaves refresh_token out when it does not rotate is\s+assumed/,
    );
  });

  it("marks the scope parameter's 37-names rule where the parameter is described", () => {
    const scope = deref(authorize.parameters.find((p: any) => deref(p).name === "scope"));
    expect(scope["x-assumption"]).toMatch(/37 scope names/);
    expect(scope["x-assumption"]).toMatch(/contract's reading/);
  });

  it("labels the user record example illustrative in its summary and in the description shown beside it", () => {
    const example = deref(user.responses["200"].content["application/json"].examples.user);
    expect(example.summary).toMatch(/^Illustrative only/);
    expect(example.description).toMatch(/^Illustrative only/);
    expect(user.responses["200"].description).toMatch(/illustrative only/);
  });

  it("labels every illustrative example in the description a single example shows beside its value", () => {
    const illustrative = Object.entries<any>(examples).filter(([, example]) => /^Illustrative/.test(example.summary));
    expect(illustrative.length).toBeGreaterThanOrEqual(5);
    for (const [name, example] of illustrative) expect(example.description, name).toMatch(/illustrat/i);
  });
});

describe("issue 19: false claims", () => {
  it("says in the quick start which package returns and which throws, not that neither throws", () => {
    const quickStart = section("Quick start");
    expect(quickStart).not.toMatch(/Neither throws/i);
    expect(squash(quickStart)).toMatch(
      /The client never throws on an HTTP status: it returns `\{ data, error, response \}`/,
    );
    expect(squash(quickStart)).toMatch(/The token manager throws: .*`OAuthResponseError`.*`SessionEndedError`/);
  });

  it("names the no-token challenge as the contract's own first 401 example has it, never a bare `Bearer`", () => {
    const challenge = headers.InvalidTokenChallenge;
    const [first] = Object.values<any>(challenge.examples);
    expect(first.value).not.toMatch(/error=/);
    expect(first.value).toMatch(/^Bearer realm="[^"]+"$/);
    expect(new RegExp(challenge.schema.pattern).test("Bearer")).toBe(false);
    expect(new RegExp(challenge.schema.pattern).test(first.value)).toBe(true);
    for (const { text } of describedNodes()) expect(text).not.toMatch(/bare `?Bearer`? challenge/);
    const row = section("Errors")
      .split("\n")
      .find((line) => line.startsWith("| the access token is expired"));
    expect(row).toContain(`\`${first.value}\``);
    expect(squash(contract.tags.find((t: any) => t.name === "Auth").description)).toContain(`\`${first.value}\``);
  });

  it("gives each operation examples of its own: the revoke 400 speaks of no code exchange, the token 400 of no revocation", () => {
    const texts = (response: any) =>
      JSON.stringify(Object.values(deref(response).content["application/json"].examples).map(deref));
    expect(texts(revoke.responses["400"])).not.toMatch(/code_verifier|grant|authorization code/i);
    expect(texts(token.responses["400"])).not.toMatch(/revo|token_type_hint/i);
  });

  it("shares no example between two operations: each operation's examples speak of that operation", () => {
    const users = new Map<string, Set<string>>();
    const walk = (node: unknown, operation: string, seen: Set<string>): void => {
      if (Array.isArray(node)) node.forEach((item) => walk(item, operation, seen));
      else if (node !== null && typeof node === "object") {
        const ref = (node as { $ref?: unknown }).$ref;
        if (typeof ref === "string") {
          if (ref.startsWith("#/components/examples/")) users.set(ref, (users.get(ref) ?? new Set()).add(operation));
          else if (!seen.has(ref)) walk(deref(node), operation, seen.add(ref));
          return;
        }
        Object.values(node).forEach((value) => walk(value, operation, seen));
      }
    };
    for (const [path, item] of Object.entries<Record<string, unknown>>(contract.paths)) {
      for (const [method, op] of Object.entries(item)) walk(op, `${method.toUpperCase()} ${path}`, new Set());
    }
    expect(users.size).toBeGreaterThan(10);
    expect([...users].filter(([, ops]) => ops.size > 1).map(([ref, ops]) => `${ref}: ${[...ops].join(", ")}`)).toEqual(
      [],
    );
  });

  it("puts first the examples a mock should serve: invalid_request for a malformed token request, the no-token 401", () => {
    const [tokenError] = Object.values<any>(deref(token.responses["400"]).content["application/json"].examples).map(
      deref,
    );
    expect(tokenError.value.error).toBe("invalid_request");
    expect(tokenError.description).toMatch(/form body a general OAuth library sends/);
    const unauthorized = responses.Unauthorized;
    const [body] = Object.values<any>(unauthorized.content["application/json"].examples).map(deref);
    expect(body.value.error).toBeUndefined();
    expect(Object.keys(headers.InvalidTokenChallenge.examples)[0]).toBe("noToken");
  });
});
